// The trace compiled into the binary (resources/resources.qrc): what the
// window shows when started without a TRACE argument.
#pragma once

#include <QByteArray>
#include <QString>

namespace attnscope::ui {

QString bundledSamplePath();     // ":/traces/softmax_8x16x1024x64.json"
QByteArray bundledSampleJson();  // empty if the resource is missing
QString bundledSampleNote();     // one sentence saying what the sample is

}  // namespace attnscope::ui
