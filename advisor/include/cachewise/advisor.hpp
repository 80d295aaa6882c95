// cachewise::advisor — candidate spaces per family, device-limit filtering, ranking by the
// model's predicted time, and a one-line reason per candidate. Plain C++, no GPU needed.
// The umbrella of the advisor's headers, one concept each, under cachewise/advisor/.
#pragma once

#include "cachewise/advisor/candidate.hpp"
#include "cachewise/advisor/candidate_pool.hpp"
#include "cachewise/advisor/candidate_ranking.hpp"
#include "cachewise/advisor/compiler_resources.hpp"
#include "cachewise/advisor/counter_summary.hpp"
#include "cachewise/advisor/describe.hpp"
#include "cachewise/advisor/error_bands.hpp"
#include "cachewise/advisor/explain.hpp"
#include "cachewise/advisor/in_parallel.hpp"
#include "cachewise/advisor/notes.hpp"
#include "cachewise/advisor/rejection.hpp"
#include "cachewise/advisor/rejection_tally.hpp"
#include "cachewise/advisor/suggest.hpp"
#include "cachewise/advisor/suggest_options.hpp"
#include "cachewise/advisor/suggestion.hpp"
#include "cachewise/advisor/suggestion_plot.hpp"
#include "cachewise/advisor/units.hpp"
#include "cachewise/model.hpp"
