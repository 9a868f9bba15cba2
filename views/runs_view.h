// runs_view.h — what every view of runs is to the window: it is handed the runs (the checked ones
// are drawn), keeps them, and draws them. The window keeps a table of views and redraws only the
// visible one. A view's own selectors (layer, head, run, ...) redraw from the kept runs.
#pragma once
#include "views/run_data.h"

namespace statescope::views {

class RunsView {
 public:
  virtual ~RunsView() = default;
  void set_runs(const Runs& runs) {
    runs_ = runs;
    show_runs();
  }

 protected:
  // Fills the view's selectors from runs_ (keeping the user's choices where they still apply) and
  // draws.
  virtual void show_runs() = 0;
  Runs runs_;
};

}  // namespace statescope::views
