// toy_view.cpp — the toy analysis's tab: entropy per position of the checked runs.
#include "views/plot_widget.h"
#include "views/run_data.h"
#include "views/runs_view.h"

namespace statescope::views {

namespace {

class ToyView : public PlotWidget, public RunsView {
 public:
  explicit ToyView(QWidget* parent = nullptr) : PlotWidget(tr("Toy entropy"), parent) {
    set_labels(tr("position"), tr("entropy (nats)"));
  }

 private:
  void show_runs() override {
    clear_series();
    for (auto& r : runs_)
      if (r.checked && r.toy)
        add_series(r.name, r.color, std::vector<double>(r.toy->position.begin(), r.toy->position.end()), r.toy->entropy);
    reset_view();
  }
};

}  // namespace

QWidget* new_toy_view() { return new ToyView; }

}  // namespace statescope::views
