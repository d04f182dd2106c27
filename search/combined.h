// The strategies built of other strategies (auto, portfolio), which make
// their members through the catalogue: one StrategyDef each, for the
// catalogue (registry.cpp).
#pragma once

#include "search/strategy/support.h"

namespace ktune::strategy_detail {

StrategyDef auto_def();
StrategyDef portfolio_def();

}  // namespace ktune::strategy_detail
