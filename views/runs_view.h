// runs_view.h — what every view of runs is to the window: it is handed the runs (the checked ones
// are drawn) and draws them. The window keeps a table of views and redraws only the visible one.
#pragma once
#include "views/run_data.h"

namespace statescope::views {

class RunsView {
 public:
  virtual ~RunsView() = default;
  virtual void set_runs(const Runs& runs) = 0;
};

}  // namespace statescope::views
