// The model-based strategies of this folder, one StrategyDef each, for the
// catalogue (search/registry.cpp).
#pragma once

#include "search/strategy/support.h"

namespace ktune::strategy_detail {

StrategyDef bayes_opt_def();
StrategyDef model_rank_def();
StrategyDef tpe_def();
StrategyDef forest_def();

}  // namespace ktune::strategy_detail
