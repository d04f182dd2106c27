#!/bin/bash
# The Slurm recipes (examples/slurm/, docs/slurm.md) run outside Slurm on the
# CPU, on replays of recorded measurements:
# - tune.sbatch with mpirun -n 2 as its launcher finishes with exit 0, as a
#   run of 2 workers, and stores what one process stores, with the same best;
# - array.sbatch, run as tasks 0, 1 and 2 of a three-line task file, writes
#   one database per task with that task's evaluations;
# - merge.sbatch merges them into one database that holds every task's rows.
# Where ktune was built without MPI (WITH_MPI 0), tune.sbatch must be refused
# (exit 2) instead, and the rest is tested as above.
#   tests/slurm_recipes_test.sh SOURCE_DIR KTUNE [WITH_MPI (1)]
# Exit 77 (skipped) where mpirun is absent.
set -u
src=$1; ktune=$2; with_mpi=${3:-1}
command -v mpirun >/dev/null 2>&1 || { echo "mpirun not found (apt-get install openmpi-bin): skipped"; exit 77; }
tmp=$(mktemp -d /tmp/ktune_slurm_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# `ktune results` ends with "N rows" (or "1 row"): N.
rows() { "$ktune" results "$@" --limit 100000 | tail -1 | awk '/^[0-9]+ rows?$/ { print $1; exit } { print "none" }'; }

# As tests/mpi_test.cpp: CI runs as root on 2 cores.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
launch="timeout 300 mpirun --oversubscribe --bind-to none -n 2"
[ "$(id -u)" = 0 ] && launch="$launch --allow-run-as-root"
unset SLURM_JOB_ID SLURM_ARRAY_JOB_ID SLURM_ARRAY_TASK_ID SLURM_PROCID KTUNE_DB

# 1. tune.sbatch: two ranks replay sgemm's whole space.
spec=$src/templates/sgemm/sgemm.yaml
data=$src/examples/data/sgemm_h100.json
args="--simulate $data --strategy brute_force --max-fevals 0"
"$ktune" tune "$spec" $args --db "$tmp/one.db" > "$tmp/one.out" 2>&1 || { cat "$tmp/one.out"; fail "one process failed"; }
KTUNE=$ktune SPEC=$spec KTUNE_ARGS="$args --json" DB=$tmp/mpi.db LAUNCH=$launch \
  bash "$src/examples/slurm/tune.sbatch" > "$tmp/mpi.json" 2> "$tmp/mpi.err"
status=$?
if [ "$with_mpi" = 0 ]; then
  [ $status -eq 2 ] && grep -q "built without MPI" "$tmp/mpi.err" ||
    { cat "$tmp/mpi.err"; fail "tune.sbatch, ktune built without MPI: exit $status, not 2"; }
  echo "tune.sbatch under mpirun -n 2: refused (exit 2), this ktune was built without MPI"
else
  [ $status -eq 0 ] || { cat "$tmp/mpi.err" "$tmp/mpi.json"; fail "tune.sbatch under mpirun -n 2: exit $status"; }
  grep -q '"workers": 2,' "$tmp/mpi.json" || { cat "$tmp/mpi.json"; fail "tune.sbatch: not a run of 2 workers"; }
  [ "$(grep -c '"run_id"' "$tmp/mpi.json")" = 1 ] || { cat "$tmp/mpi.json"; fail "tune.sbatch: not one report"; }
  n_one=$(rows --db "$tmp/one.db"); n_mpi=$(rows --db "$tmp/mpi.db")
  [ "$n_one" = "$n_mpi" ] && [ "$n_one" != none ] || fail "rows: one process $n_one, two ranks $n_mpi"
  "$ktune" best --db "$tmp/one.db" > "$tmp/best_one.txt" && "$ktune" best --db "$tmp/mpi.db" > "$tmp/best_mpi.txt" ||
    fail "ktune best"
  diff "$tmp/best_one.txt" "$tmp/best_mpi.txt" || fail "tune.sbatch: another best than one process's"
  echo "tune.sbatch under mpirun -n 2: exit 0, 2 workers, $n_mpi rows as one process, the same best:"
  cat "$tmp/best_mpi.txt"
fi

# 2. array.sbatch: three tasks, three kernels, three databases.
cat > "$tmp/tasks.txt" << EOF
# one task a line: the spec, then its options
$src/templates/vector_add/vector_add.yaml --simulate $src/examples/data/vector_add_h100.json --max-fevals 30

$src/templates/triad/triad.yaml --simulate $src/examples/data/triad_h100.json --max-fevals 40
$src/templates/reduce_sum/reduce_sum.yaml --simulate $src/examples/data/reduce_sum_h100.json --max-fevals 50
EOF
want=(30 40 50)
kernels=(vector_add triad reduce_sum)
for task in 0 1 2; do
  KTUNE=$ktune TASKS=$tmp/tasks.txt OUTDIR=$tmp/array SLURM_ARRAY_TASK_ID=$task \
    bash "$src/examples/slurm/array.sbatch" > "$tmp/task$task.out" 2>&1 ||
    { cat "$tmp/task$task.out"; fail "array.sbatch task $task failed"; }
  [ -f "$tmp/array/task-$task.db" ] || fail "task $task wrote no $tmp/array/task-$task.db"
  n=$(rows --db "$tmp/array/task-$task.db")
  [ "$n" = "${want[$task]}" ] || fail "task $task: $n rows, not ${want[$task]}"
  echo "array.sbatch task $task: task-$task.db, $n rows of ${kernels[$task]}"
done
KTUNE=$ktune TASKS=$tmp/tasks.txt OUTDIR=$tmp/array SLURM_ARRAY_TASK_ID=3 \
  bash "$src/examples/slurm/array.sbatch" > "$tmp/task3.out" 2>&1
status=$?
[ $status -eq 2 ] || { cat "$tmp/task3.out"; fail "a task past the file's last line: exit $status, not 2"; }

# 3. merge.sbatch: one database with every task's rows, twice merged the same.
for pass in 1 2; do
  KTUNE=$ktune OUTDIR=$tmp/array DB=$tmp/merged.db bash "$src/examples/slurm/merge.sbatch" > "$tmp/merge.out" 2>&1 ||
    { cat "$tmp/merge.out"; fail "merge.sbatch (pass $pass) failed"; }
done
total=0
for task in 0 1 2; do
  n=$(rows --db "$tmp/merged.db" --kernel "${kernels[$task]}")
  [ "$n" = "${want[$task]}" ] || fail "merged: ${kernels[$task]} has $n rows, not ${want[$task]}"
  total=$((total + n))
done
n=$(rows --db "$tmp/merged.db")
[ "$n" = "$total" ] || fail "merged: $n rows, not $total"
"$ktune" best --db "$tmp/merged.db" > "$tmp/best_merged.txt" || fail "ktune best on the merged database"
[ "$(tail -1 "$tmp/best_merged.txt")" = "3 rows" ] || { cat "$tmp/best_merged.txt"; fail "merged: not 3 kernels' best"; }
echo "merge.sbatch (run twice): merged.db holds $n rows (30 + 40 + 50), the best of 3 kernels:"
cat "$tmp/best_merged.txt"
echo "slurm recipes: ok"
