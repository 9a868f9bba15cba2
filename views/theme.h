// theme.h — every colour statescope draws with, in one table per theme (dark, light): the window
// palette, plot chrome, notes and field states, and the run palette. Views and the app read colours
// only from here.
#pragma once
#include <QColor>
#include <QPalette>

namespace statescope::views {

struct Theme {
  bool dark = true;
  // Plots.
  QColor plot_background, plot_foreground, plot_grid, legend_background;
  QColor hidden_series_text;  // a legend entry whose series is hidden
  QColor marker;              // vertical markers (T) and their labels
  QColor hint;                // "No results yet" over an empty plot
  // Notes and field states (panel, JSON editor).
  QColor note;                // a note that needs attention (loaded runs stand)
  QColor invalid_background, invalid_text;  // a field with a bad value
  QColor valid_verdict, invalid_verdict;    // the JSON editor's verdict line
  // The application palette (Fusion); the light theme uses the style's standard palette.
  QPalette palette() const;
};

const Theme& theme(bool dark);

// A distinct colour for the i-th run (a qualitative palette readable on light and dark).
QColor run_color(int i);

// Colour stops of the heatmaps' perceptual scale (viridis), low to high.
const QColor* heat_stops(int* count);

}  // namespace statescope::views
