// The population strategies of this folder, one StrategyDef each, for the
// catalogue (search/registry.cpp).
#pragma once

#include "search/strategy/support.h"

namespace ktune::strategy_detail {

StrategyDef genetic_algorithm_def();
StrategyDef pso_def();
StrategyDef diff_evo_def();
StrategyDef firefly_def();

}  // namespace ktune::strategy_detail
