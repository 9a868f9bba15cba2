// tab_groups.cpp — the two rows of tabs (see tab_groups.h).
#include "app/gui/tab_groups.h"

#include <QSignalBlocker>
#include <QTabBar>
#include <QTabWidget>
#include <QVBoxLayout>
#include <algorithm>

namespace statescope::gui {

TabGroups::TabGroups(QTabWidget* tabs, const QStringList& groups, QWidget* parent)
    : QWidget(parent), tabs_(tabs), groups_bar_(new QTabBar(this)), pages_bar_(new QTabBar(this)) {
  groups_bar_->setObjectName("tab_groups");
  pages_bar_->setObjectName("tab_pages");
  for (auto* b : {groups_bar_, pages_bar_}) {
    b->setExpanding(false);
    b->setDrawBase(b == pages_bar_);
  }
  QStringList names;
  for (int page = 0; page < tabs_->count(); ++page) {
    const QString g = page < groups.size() ? groups[page] : tabs_->tabText(page);
    int k = static_cast<int>(names.indexOf(g));
    if (k < 0) {
      k = static_cast<int>(names.size());
      names << g;
      members_.emplace_back();
      groups_bar_->addTab(g);
    }
    members_[k].push_back(page);
    group_of_.push_back(k);
  }
  for (int k = 0; k < static_cast<int>(members_.size()); ++k) {
    QStringList titles;
    for (int p : members_[k]) titles << tabs_->tabText(p).remove('&');
    groups_bar_->setTabToolTip(k, titles.join(", "));
    last_.push_back(members_[k].front());
  }
  auto* lay = new QVBoxLayout(this);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->setSpacing(0);
  lay->addWidget(groups_bar_);
  lay->addWidget(pages_bar_);
  tabs_->tabBar()->hide();
  connect(groups_bar_, &QTabBar::currentChanged, this, [this](int k) {
    if (k >= 0 && k < static_cast<int>(last_.size())) tabs_->setCurrentIndex(last_[k]);
  });
  connect(pages_bar_, &QTabBar::currentChanged, this, [this](int i) {
    const int k = groups_bar_->currentIndex();
    if (k >= 0 && i >= 0 && i < static_cast<int>(members_[k].size())) tabs_->setCurrentIndex(members_[k][i]);
  });
  connect(tabs_, &QTabWidget::currentChanged, this, [this](int page) { show_page(page); });
  show_page(tabs_->currentIndex());
}

void TabGroups::show_page(int page) {
  if (page < 0 || page >= static_cast<int>(group_of_.size())) return;
  const int k = group_of_[page];
  last_[k] = page;
  const QSignalBlocker b1(groups_bar_), b2(pages_bar_);
  groups_bar_->setCurrentIndex(k);
  while (pages_bar_->count() > 0) pages_bar_->removeTab(0);
  for (int p : members_[k]) pages_bar_->addTab(tabs_->tabText(p));
  const auto& m = members_[k];
  pages_bar_->setCurrentIndex(static_cast<int>(std::find(m.begin(), m.end(), page) - m.begin()));
  pages_bar_->setVisible(m.size() > 1);
}

int TabGroups::needed_width() const {
  int pages = 0;
  QTabBar probe;  // each group's row laid out as it would be shown
  probe.setFont(pages_bar_->font());
  probe.setExpanding(false);
  for (const auto& m : members_) {
    while (probe.count() > 0) probe.removeTab(0);
    for (int p : m) probe.addTab(tabs_->tabText(p));
    pages = std::max(pages, probe.sizeHint().width());
  }
  return std::max(groups_bar_->sizeHint().width(), pages);
}

}  // namespace statescope::gui
