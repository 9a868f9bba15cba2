// runs_table_view.cpp — the Runs table (runs_table_view.h).
#include "views/runs_table_view.h"

#include <QClipboard>
#include <QFileInfo>
#include <QGuiApplication>
#include <QMenu>
#include <QHeaderView>
#include <QIcon>
#include <QPixmap>
#include <QLabel>
#include <QRegularExpression>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "core/base/constants.h"
#include "core/store/run_summary.h"

namespace statescope::views {

double t95(int dof) {
  static const double t[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                             2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                             2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  return dof < 1 ? NAN : dof <= 30 ? t[dof - 1] : 1.96;
}

namespace {

// Sorts by the number behind a cell (Qt::UserRole), text where there is none; a group's seeds stay
// under it (the tree sorts each level).
class Item : public QTreeWidgetItem {
 public:
  using QTreeWidgetItem::QTreeWidgetItem;
  bool operator<(const QTreeWidgetItem& o) const override {
    const int c = treeWidget() ? treeWidget()->sortColumn() : 0;
    const QVariant a = data(c, Qt::UserRole), b = o.data(c, Qt::UserRole);
    if (a.isValid() && b.isValid()) return a.toDouble() < b.toDouble();
    if (a.isValid() != b.isValid()) return a.isValid();  // numbers before blanks
    return text(c) < o.text(c);
  }
};

// One run's numbers, by column key.
struct Row {
  QString name, policy, status, file, tip;
  QString sweep_group;  // its sweep's group ("": not a sweep's run)
  QColor color;
  std::map<QString, double> value, err;  // err: ± shown beside the value (standard error)
};

QString num(double v, int prec = 3) { return std::isfinite(v) ? QString::number(v, 'f', prec) : QString("–"); }

// A shell word: single-quoted unless plainly safe.
QString shell_word(const QString& s) {
  static const QRegularExpression safe("^[A-Za-z0-9_./=@:,+-]+$");
  if (safe.match(s).hasMatch()) return s;
  QString q = s;
  q.replace("'", "'\\''");
  return "'" + q + "'";
}

}  // namespace

QString reproduce_command(const RunData& r) {
  if (r.file.isEmpty()) return {};
  const QString name = r.in_file.isEmpty() ? r.name : r.in_file;
  QString out = QFileInfo(r.file).completeBaseName() + "-" + name;
  out.replace(QRegularExpression("[^A-Za-z0-9._-]"), "_");
  QString cmd = "statescope-cli";
  const auto m = QRegularExpression("threads (\\d+)").match(r.versions);
  if (m.hasMatch()) cmd += " --threads " + m.captured(1);
  return cmd + " run --from " + shell_word(r.file) + " --only " + shell_word(name) + " -o " + shell_word(out + ".h5");
}

RunsTableView::RunsTableView(QWidget* parent) : QWidget(parent) {
  auto* lay = new QVBoxLayout(this);
  note_ = new QLabel(this);
  note_->setWordWrap(true);
  tree_ = new QTreeWidget(this);
  tree_->setRootIsDecorated(true);
  tree_->setAlternatingRowColors(true);
  tree_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  tree_->setSortingEnabled(true);
  tree_->setUniformRowHeights(true);
  lay->addWidget(note_);
  lay->addWidget(tree_, 1);
  connect(tree_, &QTreeWidget::itemSelectionChanged, this, [this] {
    QStringList names;
    for (auto* it : tree_->selectedItems()) {
      if (it->childCount() == 0) names << it->data(0, Qt::UserRole + 1).toString();
      for (int i = 0; i < it->childCount(); ++i) names << it->child(i)->data(0, Qt::UserRole + 1).toString();
    }
    names.removeDuplicates();
    if (selected) selected(names);
  });
  // A run's row: copy the command that runs it again alone (its numbers, from its file), or rename it.
  tree_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(tree_, &QTreeWidget::customContextMenuRequested, this, [this](const QPoint& at) {
    QTreeWidgetItem* it = tree_->itemAt(at);
    if (!it || it->childCount() > 0) return;
    const QString cmd = command_of(it->data(0, Qt::UserRole + 1).toString());
    QMenu menu(this);
    QAction* copy = menu.addAction(tr("Copy the command that reproduces this run"));
    copy->setEnabled(!cmd.isEmpty());
    copy->setToolTip(cmd);
    QAction* ren = rename ? menu.addAction(tr("Rename…")) : nullptr;
    QAction* chosen = menu.exec(tree_->viewport()->mapToGlobal(at));
    if (chosen && chosen == copy) QGuiApplication::clipboard()->setText(cmd);
    if (chosen && chosen == ren) rename(it->data(0, Qt::UserRole + 1).toString());
  });
}

QString RunsTableView::command_of(const QString& name) const {
  for (const auto& r : runs_)
    if (r.name == name) return reproduce_command(r);
  return {};
}

void RunsTableView::show_runs() {
  // Filled in the runs' order (the spec's); sorted only when a header is clicked.
  tree_->setSortingEnabled(false);
  tree_->clear();
  // Every evaluated run summarised against its yardstick (core/store/run_summary.h).
  std::vector<Row> rows;
  std::vector<std::pair<int64_t, int64_t>> bins;  // the union, in order
  // A run's baseline is its own model's: an experiment of several models names their runs
  // "<model>:<policy>" (core/experiment/experiment.cpp), one baseline each.
  std::map<QString, double> baseline_far;  // file + "\n" + model -> its baseline's far loss
  std::vector<QString> row_model;          // per row: its file + "\n" + model
  bool fixed_all = true;
  for (const auto& r : runs_) {
    if (!r.eval) continue;
    const RunSummary s = summarize(*r.eval, r.name.toStdString(), r.intervention.toStdString());
    Row row;
    row.name = r.name, row.policy = r.intervention, row.status = r.status, row.file = r.file, row.color = r.color;
    row.sweep_group = QString::fromStdString(r.sweep.group);
    row.tip = QObject::tr("%1\nintervention: %2\nstatus: %3\nfile: %4\nT = %5, %6 sequences of %7 positions")
                  .arg(r.name, r.intervention, r.status, r.file)
                  .arg(r.eval->T)
                  .arg(r.eval->sequences)
                  .arg(r.eval->length);
    // What the file records about where the run came from (a live run has none of it yet).
    QStringList cell;
    for (const auto& [k, v] : r.sweep.values) cell << QString("%1 = %2").arg(QString::fromStdString(k)).arg(v);
    const std::pair<QString, QString> more[] = {
        {QObject::tr("run in its file"), r.in_file == r.name ? QString() : r.in_file},
        {QObject::tr("sweep cell"), cell.join(", ")}, {QObject::tr("seed"), r.seed},
        {QObject::tr("post-training steps"), r.train.empty() ? QString() : QString::number(r.train.back().step)},
        {QObject::tr("post-training time"), r.train.empty() ? QString() : QString("%1 s").arg(r.train.back().elapsed_s, 0, 'f', 1)},
        {QObject::tr("model"), r.model}, {QObject::tr("architecture"), r.architecture}, {QObject::tr("device"), r.device},
        {QObject::tr("versions"), r.versions}, {QObject::tr("message"), r.message}};
    for (const auto& [k, v] : more)
      if (!v.isEmpty()) row.tip += "\n" + k + ": " + v;
    double within = 0;
    const int64_t T = std::min<int64_t>(r.eval->T, static_cast<int64_t>(r.eval->nll.size()));
    for (int64_t p = 0; p < T; ++p) within += r.eval->nll[static_cast<size_t>(p)] * kBitsPerNat / static_cast<double>(T);
    if (T > 0) row.value["within"] = within;
    row.value["far"] = s.loss_far;
    row.value["norm"] = s.norm_ratio;
    fixed_all = fixed_all && s.fixed;
    for (size_t b = 0; b < s.bins.size() && b < s.excess.size(); ++b) {
      const QString k = QString("bin%1_%2").arg(s.bins[b].first).arg(s.bins[b].second);
      row.value[k] = s.excess[b];
      if (b < s.excess_se.size()) row.err[k] = s.excess_se[b];
      if (std::find(bins.begin(), bins.end(), s.bins[b]) == bins.end()) bins.push_back(s.bins[b]);
    }
    const QString in_file = r.in_file.isEmpty() ? r.name : r.in_file;
    const int colon = in_file.lastIndexOf(':');
    const QString model = r.file + "\n" + (colon < 0 ? QString() : in_file.left(colon));
    if (in_file.mid(colon + 1) == "baseline") baseline_far[model] = s.loss_far;
    rows.push_back(row);
    row_model.push_back(model);
  }
  std::sort(bins.begin(), bins.end());
  for (size_t i = 0; i < rows.size(); ++i)
    if (auto it = baseline_far.find(row_model[i]); it != baseline_far.end())
      rows[i].value["delta"] = rows[i].value["far"] - it->second;

  // Columns: the run, then the headline (its far loss against its baseline, the excess per bin), then
  // the state norm and the loss within T, then where the run came from: at 1280 px the headline shows
  // beside the name without scrolling.
  struct Col {
    QString key, title, tip;  // key: a number of the row's, or "@name", "@policy", "@status", "@file"
  };
  std::vector<Col> cols{{"@name", tr("Run"), tr("run name (seed groups fold their seeds beneath)")},
                        {"delta", tr("Δ far vs baseline"),
                         tr("loss over the last half of positions minus its model's baseline run's (same file), "
                            "bits/token")}};
  for (auto [lo, hi] : bins)
    cols.push_back({QString("bin%1_%2").arg(lo).arg(hi), tr("[%1, %2)").arg(lo).arg(hi),
                    tr("mean loss minus the yardstick's over positions [%1, %2), bits/token, ± its standard error over "
                       "sequences")
                        .arg(lo)
                        .arg(hi)});
  cols.push_back({"norm", tr("Norm far/T"), tr("state norm over the last half of positions / at T-1, mean over layers")});
  cols.push_back({"within", tr("Loss < T"), tr("mean loss over positions [0, T), bits/token")});
  cols.push_back({"@policy", tr("Intervention"), tr("policy or training-free intervention")});
  cols.push_back({"@status", tr("Status"), {}});
  cols.push_back({"@file", tr("File"), {}});
  QStringList header;
  for (const auto& c : cols) header << c.title;
  tree_->setColumnCount(static_cast<int>(cols.size()));
  tree_->setHeaderLabels(header);
  for (int i = 0; i < static_cast<int>(cols.size()); ++i) tree_->headerItem()->setToolTip(i, cols[static_cast<size_t>(i)].tip);

  auto fill = [&](QTreeWidgetItem* it, const Row& row) {
    it->setText(0, row.name);
    it->setData(0, Qt::UserRole + 1, row.name);
    if (row.color.isValid()) {  // the run's colour in every plot
      QPixmap swatch(10, 10);
      swatch.fill(row.color);
      it->setIcon(0, QIcon(swatch));
    }
    for (size_t c = 1; c < cols.size(); ++c) {
      const QString& k = cols[c].key;
      const int ci = static_cast<int>(c);
      if (k == "@policy") it->setText(ci, row.policy);
      if (k == "@status") it->setText(ci, row.status);
      if (k == "@file") it->setText(ci, QFileInfo(row.file).fileName());
      if (k.startsWith('@')) continue;
      const auto v = row.value.find(k);
      if (v == row.value.end()) continue;
      const auto e = row.err.find(k);
      const int prec = k == "norm" ? 2 : 3;
      QString text = (k == "delta" && v->second > 0 ? "+" : "") + num(v->second, prec);
      if (e != row.err.end() && std::isfinite(e->second)) text += " ± " + num(e->second, prec);
      it->setText(ci, text);
      it->setData(ci, Qt::UserRole, v->second);
      it->setTextAlignment(ci, Qt::AlignRight | Qt::AlignVCenter);
    }
    for (int c = 0; c < static_cast<int>(cols.size()); ++c) it->setToolTip(c, row.tip);
  };

  // Seeds of one setting: a sweep's group, else the name without its "_s<seed>" (copying --seeds).
  auto group_of = [&](const Row& row, size_t i) {
    if (!row.sweep_group.isEmpty()) return row.file + "\n" + row.sweep_group;
    static const QRegularExpression seed_suffix("_s\\d+$");
    QString base = row.name;
    base.remove(seed_suffix);
    return base == row.name ? QString("\n%1").arg(i) : row.file + "\n" + base;
  };
  std::map<QString, std::vector<size_t>> groups;
  std::vector<QString> order;
  for (size_t i = 0; i < rows.size(); ++i) {
    const QString g = group_of(rows[i], i);
    if (!groups.count(g)) order.push_back(g);
    groups[g].push_back(i);
  }
  for (const auto& g : order) {
    const auto& members = groups[g];
    if (members.size() == 1) {
      auto* it = new Item(tree_);
      fill(it, rows[members[0]]);
      continue;
    }
    // mean ± 95% interval over the seeds (t with n-1 degrees of freedom)
    Row mean;
    mean.name = tr("%1 (%2 seeds)").arg(g.section('\n', 1)).arg(members.size());
    mean.policy = rows[members[0]].policy;
    mean.file = rows[members[0]].file;
    std::set<QString> statuses;
    for (size_t m : members) statuses.insert(rows[m].status);
    mean.status = statuses.size() == 1 ? *statuses.begin() : tr("mixed");
    std::set<QString> keys;
    for (size_t m : members)
      for (const auto& [k, v] : rows[m].value) keys.insert(k);
    for (const auto& k : keys) {
      std::vector<double> xs;
      for (size_t m : members)
        if (auto v = rows[m].value.find(k); v != rows[m].value.end() && std::isfinite(v->second)) xs.push_back(v->second);
      if (xs.empty()) continue;
      double mu = 0, ss = 0;
      for (double x : xs) mu += x / static_cast<double>(xs.size());
      for (double x : xs) ss += (x - mu) * (x - mu);
      mean.value[k] = mu;
      if (xs.size() > 1)
        mean.err[k] = t95(static_cast<int>(xs.size()) - 1) * std::sqrt(ss / static_cast<double>(xs.size() - 1)) /
                      std::sqrt(static_cast<double>(xs.size()));
    }
    mean.tip = tr("%1 seeds of one setting: mean ± 95% interval (Student t, %2 degrees of freedom) over them")
                   .arg(members.size())
                   .arg(members.size() - 1);
    auto* parent = new Item(tree_);
    fill(parent, mean);
    QFont f = parent->font(0);
    f.setBold(true);
    for (int c = 0; c < tree_->columnCount(); ++c) parent->setFont(c, f);
    for (size_t m : members) fill(new Item(parent), rows[m]);
  }
  tree_->header()->setSortIndicator(-1, Qt::AscendingOrder);
  tree_->setSortingEnabled(true);
  note_->setText(rows.empty() ? tr("No evaluated runs yet — Run ▸ Run experiment (Ctrl+R), or open an experiment file.")
                              : (fixed_all ? tr("Columns [a, b): the excess over positions a to b, in bits/token above the "
                                                "experiment's one yardstick (the loaded model's state-reset loss on the same "
                                                "bytes) ± standard error over sequences. Click a header to sort; select runs "
                                                "to pick them out in every plot.")
                                           : tr("Columns [a, b): the excess over positions a to b, in bits/token above each "
                                                "run's yardstick (the one yardstick where its file has it, else the run's own "
                                                "state-reset loss) ± standard error. Click a header to sort; select runs to pick "
                                                "them out in every plot.")));
  for (int c = 0; c < tree_->columnCount(); ++c) tree_->resizeColumnToContents(c);
  // A long name elides (its tooltip has it whole) rather than push the headline off screen.
  tree_->setColumnWidth(0, std::min(tree_->columnWidth(0), 260));
}

}  // namespace statescope::views
