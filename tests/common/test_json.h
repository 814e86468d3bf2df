// Small readers the CLI and GUI tests share: a .gz file whole, and a JSON array as ints or strings.
#pragma once

#include <zlib.h>

#include <QByteArray>
#include <QJsonArray>
#include <QJsonValue>
#include <QList>
#include <QString>
#include <QStringList>

// The inflated bytes of a .gz file ("" when it cannot be opened).
inline QByteArray gunzip(const QString& path) {
  gzFile f = gzopen(path.toLocal8Bit().constData(), "rb");
  QByteArray out;
  if (!f) return out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, n);
  gzclose(f);
  return out;
}

inline QList<qint64> ints(const QJsonValue& v) {
  QList<qint64> out;
  for (const QJsonValue& x : v.toArray()) out << x.toInteger();
  return out;
}

inline QStringList strings(const QJsonValue& v) {
  QStringList out;
  for (const QJsonValue& x : v.toArray()) out << x.toString();
  return out;
}
