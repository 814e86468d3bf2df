// The viewer's suites (those linking attnscope_ui, built with QtWidgets): the core suites' headers and
// QtWidgets (tests/CMakeLists.txt, attnscope_test).
#pragma once
#include <QtWidgets>
#include "test_pch.h"
