"""Seconds from a Kernel Tuner run's start to its first result within a
fraction of a known optimum, from each result's timestamp (Kernel Tuner 1.5
stamps every result as it is stored)."""
import datetime


def reached_times(ok_results, optimum_ms, t0_epoch, goals=(0.9, 0.95)):
    """{goal: seconds} for each goal reached (optimum / best-so-far >= goal);
    `ok_results` are the results with a numeric time, `t0_epoch` the run's
    start (time.time())."""
    reached = {}
    timed = []
    for r in ok_results:
        try:
            timed.append((datetime.datetime.fromisoformat(str(r["timestamp"])).timestamp(), r["time"]))
        except (KeyError, ValueError):
            pass
    running = None
    for when, t in sorted(timed):
        running = t if running is None else min(running, t)
        for goal in goals:
            if optimum_ms / running >= goal and goal not in reached:
                reached[goal] = round(when - t0_epoch, 2)
    return reached
