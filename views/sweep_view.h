// sweep_view.h — a sweep's summary: the excess in the farthest position bin (or the loss far past T)
// against one swept field, one line per policy (and per value of the other swept fields), the mean
// over the seeds with their standard deviation as error bars. Runs without a sweep cell are left out.
#pragma once
#include "views/plot_widget.h"
#include "views/run_data.h"
#include "views/runs_view.h"

class QComboBox;

namespace statescope::views {

// The far-past-T measures of one evaluation, bits/token: the mean excess over the last of the
// log-spaced bins [T, 2T), [2T, 4T), ... and the mean loss over the last half of the positions.
double far_excess_bits(const EvalResult& e);
double far_loss_bits(const EvalResult& e);

}  // namespace statescope::views
