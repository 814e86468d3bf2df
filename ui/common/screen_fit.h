// A top-level window sized to fit the screen it opens on: its frame (title bar and borders) and
// the desktop's panels included, so no part of it (the status bar) lies off screen on a laptop.
// Before the window manager has framed the window, Qt reports no frame: the style's title bar
// height and a border stand in for it, and once framed, the real frame is used.
#pragma once

#include <QMargins>
#include <QSize>

class QWidget;

namespace attnscope::ui {

// The frame around a top-level window: the real one when the window system reports it, else an
// estimate (the style's title bar height on top, a border of 4 px on the other sides).
QMargins windowFrame(const QWidget* w);

// Resizes `w` to `wanted`, bounded by its screen's available geometry less the frame, and moves it
// inside that geometry. Returns the size given.
QSize fitToScreen(QWidget* w, QSize wanted);

// Fits `w` again once a window manager has framed it (after the first show), where the real frame
// sticks out of the screen: a window never ends up taller than the screen.
void keepInsideScreen(QWidget* w);

}  // namespace attnscope::ui
