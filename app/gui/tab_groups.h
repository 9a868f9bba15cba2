// tab_groups.h — the window's tabs in two rows: a row of groups (Runs, Loss, States, Memory, Tasks,
// Sweep) and, below it, the tabs of the chosen group, so that every tab fits at 1280 px. The flat
// QTabWidget stays the one truth (its index is what the window and the tests set and read); its own
// tab bar is hidden and these two rows follow it both ways. A group remembers the tab last shown in it.
#pragma once
#include <QStringList>
#include <QWidget>
#include <vector>

class QTabBar;
class QTabWidget;

namespace statescope::gui {

class TabGroups : public QWidget {
 public:
  // groups[i]: the (translated) group of tabs' page i; a group's pages in their order in `tabs`.
  TabGroups(QTabWidget* tabs, const QStringList& groups, QWidget* parent = nullptr);
  QTabBar* group_bar() const { return groups_bar_; }  // object name "tab_groups"
  QTabBar* page_bar() const { return pages_bar_; }    // object name "tab_pages"; hidden for a one-tab group
  // The width both rows need to show every title without scroll buttons.
  int needed_width() const;

 private:
  void show_page(int page);  // the rows follow the flat widget's current page
  QTabWidget* tabs_;
  QTabBar* groups_bar_;
  QTabBar* pages_bar_;
  std::vector<std::vector<int>> members_;  // per group: its pages
  std::vector<int> group_of_;              // per page: its group
  std::vector<int> last_;                  // per group: the page last shown
};

}  // namespace statescope::gui
