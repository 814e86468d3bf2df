// Precompiled for every Qt Test suite (tests/CMakeLists.txt, attnscope_test): Qt's and the standard
// library's headers that nearly every suite includes, parsed once per build instead of once per suite.
// Only headers outside the project: a suite still includes what it uses, and a change to our headers
// never rebuilds this one.
#pragma once
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>
