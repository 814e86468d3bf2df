// The mouse wheel scrolls panels and never changes a control the user has not focused: over an
// unfocused dropdown, spin box or slider the wheel goes to the scroll area around it (the Run panel
// scrolled into its Sync dropdown and turned "none" into "after each step"). A control takes the
// wheel once the user clicked or tabbed into it.
#pragma once

class QWidget;

namespace attnscope::ui {

// Every dropdown, spin box and slider under `root` (now): wheel events only when focused, and focus
// by click or Tab, never by the wheel.
void guardWheel(QWidget* root);

}  // namespace attnscope::ui
