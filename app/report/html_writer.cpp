// The report Document as one self-contained HTML page: the same blocks as the
// PDF, tables as <table>, figures as PNG embedded in base64 (painted by the same
// callbacks at 2x resolution).
#include <QBuffer>
#include <QFile>
#include <QImage>
#include <QPainter>
#include <map>

#include "app/report/report_data.h"

namespace app::report {

namespace {

QString esc(const QString& s) { return s.toHtmlEscaped(); }
QString css(const QColor& c) { return c.name(QColor::HexRgb); }

QString toneClass(Tone t) {
  switch (t) {
    case Tone::Muted: return QStringLiteral("muted");
    case Tone::Strong: return QStringLiteral("strong");
    case Tone::Worse: return QStringLiteral("worse");
    case Tone::Better: return QStringLiteral("better");
    case Tone::Warning: return QStringLiteral("warning");
    case Tone::Normal: break;
  }
  return {};
}

QString styleSheet() {
  const Theme& t = theme();
  return QStringLiteral(
             "body{font-family:'%1',sans-serif;color:%2;background:#fff;margin:0}"
             "main{max-width:60em;margin:2em auto;padding:0 1.5em;font-size:10pt;line-height:1.4}"
             "h1.title{color:%3;font-size:24pt;margin:0 0 .3em}"
             "h2{color:%3;font-size:15pt;border-bottom:1px solid %4;padding-bottom:.15em;margin-top:1.8em}"
             "h3{font-size:11pt;margin:1.2em 0 .4em}"
             "p.muted{color:%5;font-size:8.5pt}p.strong{font-weight:bold}"
             "p.warning{background:%6;color:%7;padding:.4em .6em}"
             "table{border-collapse:collapse;margin:.4em 0 .2em;width:100%;font-size:8.5pt}"
             "table.dense{font-family:'%8','%1',sans-serif;font-size:8pt}"
             "th{background:%9;text-align:left;padding:.25em .45em;border-bottom:1px solid %4}"
             "td{padding:.2em .45em;vertical-align:top}tr:nth-child(even) td{background:%10}"
             "td.num,th.num{text-align:right;white-space:nowrap}"
             "td.muted{color:%5}td.strong{font-weight:bold}"
             "td.worse{background:%11 !important;color:%12;font-weight:bold}"
             "td.better{background:%13 !important;color:%14;font-weight:bold}"
             "td.warning{background:%6 !important;color:%7}"
             "span.sw{display:inline-block;width:.7em;height:.7em;margin-right:.35em;vertical-align:baseline}"
             "div.note{color:%5;font-size:8pt;margin-bottom:1em}"
             "figure{margin:.6em 0 1.2em;text-align:center}figure img{max-width:100%}"
             "figcaption{color:%5;font-size:8pt}"
             "footer{color:%5;font-size:8pt;border-top:1px solid %4;margin-top:3em;padding:.5em 0}")
      .arg(t.font, css(t.text), css(t.accent), css(t.rule), css(t.muted), css(t.warningBack), css(t.warningText),
           t.denseFont, css(t.headerBack))
      .arg(css(t.zebra), css(t.worseBack), css(t.worseText), css(t.betterBack), css(t.betterText));
}

QString figureImage(const Figure& f) {
  const int w = f.rasterWidthPx;
  const int h = std::max(1, static_cast<int>(std::lround(w * f.aspect)));
  QImage img(w, h, QImage::Format_ARGB32_Premultiplied);
  img.fill(Qt::white);
  // Resolution chosen so the figure's point sizes match a 16 cm wide print.
  const double dpi = f.rasterDpi > 0 ? f.rasterDpi : w / (16.0 / 2.54);
  img.setDotsPerMeterX(static_cast<int>(std::lround(dpi / 0.0254)));
  img.setDotsPerMeterY(static_cast<int>(std::lround(dpi / 0.0254)));
  {
    QPainter p(&img);
    p.setRenderHint(QPainter::Antialiasing, true);
    p.setRenderHint(QPainter::TextAntialiasing, true);
    if (f.paint) f.paint(p, QRectF(0, 0, w, h));
  }
  QByteArray png;
  QBuffer buf(&png);
  buf.open(QIODevice::WriteOnly);
  img.save(&buf, "PNG");
  return QStringLiteral("data:image/png;base64,") + QString::fromLatin1(png.toBase64());
}

void appendTable(QString& out, const Table& t) {
  out += t.dense ? QStringLiteral("<table class=\"dense\">") : QStringLiteral("<table>");
  if (t.header) {
    out += QStringLiteral("<thead><tr>");
    for (const auto& c : t.columns)
      out += QStringLiteral("<th%1>%2</th>").arg(c.numeric ? QStringLiteral(" class=\"num\"") : QString(), esc(c.title));
    out += QStringLiteral("</tr></thead>");
  }
  out += QStringLiteral("<tbody>");
  for (const auto& row : t.rows) {
    out += QStringLiteral("<tr>");
    for (size_t c = 0; c < row.size() && c < t.columns.size(); ++c) {
      QStringList classes;
      if (t.columns[c].numeric) classes << QStringLiteral("num");
      if (const QString tc = toneClass(row[c].tone); !tc.isEmpty()) classes << tc;
      out += classes.isEmpty() ? QStringLiteral("<td>") : QStringLiteral("<td class=\"%1\">").arg(classes.join(' '));
      if (row[c].swatch.isValid())
        out += QStringLiteral("<span class=\"sw\" style=\"background:%1\"></span>").arg(css(row[c].swatch));
      out += esc(row[c].text) + QStringLiteral("</td>");
    }
    out += QStringLiteral("</tr>");
  }
  out += QStringLiteral("</tbody></table>");
  if (!t.note.isEmpty()) out += QStringLiteral("<div class=\"note\">%1</div>").arg(esc(t.note));
}

}  // namespace

core::Status writeHtml(const Document& doc, const QString& path, const ProgressFn& progress, std::stop_token stop) {
  QString out;
  out += QStringLiteral("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                        "<meta name=\"generator\" content=\"SchedLab\"><title>%1</title><style>%2</style></head>"
                        "<body><main>\n")
             .arg(esc(doc.title), styleSheet());
  std::map<size_t, int> headingNumber;
  int n = 0;
  for (size_t i = 0; i < doc.blocks.size(); ++i)
    if (doc.blocks[i].kind == Block::Kind::Heading) headingNumber[i] = ++n;
  size_t figures = 0, painted = 0;
  for (const Block& b : doc.blocks) figures += b.kind == Block::Kind::Figure ? 1 : 0;
  for (size_t i = 0; i < doc.blocks.size(); ++i) {
    if (stop.stop_requested()) return core::Error("report cancelled");
    const Block& b = doc.blocks[i];
    switch (b.kind) {
      case Block::Kind::Title: out += QStringLiteral("<h1 class=\"title\">%1</h1>\n").arg(esc(b.text)); break;
      case Block::Kind::Heading:
        out += QStringLiteral("<h2 id=\"s%1\">%1&nbsp;&nbsp;%2</h2>\n").arg(headingNumber[i]).arg(esc(b.text));
        break;
      case Block::Kind::Subheading: out += QStringLiteral("<h3>%1</h3>\n").arg(esc(b.text)); break;
      case Block::Kind::Paragraph: {
        const QString tc = toneClass(b.tone);
        out += (tc.isEmpty() ? QStringLiteral("<p>") : QStringLiteral("<p class=\"%1\">").arg(tc)) + esc(b.text) +
               QStringLiteral("</p>\n");
        break;
      }
      case Block::Kind::Contents:
        out += QStringLiteral("<ol>");
        for (const auto& [idx, num] : headingNumber)
          out += QStringLiteral("<li><a href=\"#s%1\">%2</a></li>").arg(num).arg(esc(doc.blocks[idx].text));
        out += QStringLiteral("</ol>\n");
        break;
      case Block::Kind::Table:
        appendTable(out, b.table);
        out += QLatin1Char('\n');
        break;
      case Block::Kind::Figure:
        out += QStringLiteral("<figure><img src=\"%1\" alt=\"%2\" style=\"width:%3%\">")
                   .arg(figureImage(b.figure), esc(b.figure.alt))
                   .arg(static_cast<int>(std::lround(100 * b.figure.widthFraction)));
        if (!b.figure.caption.isEmpty()) out += QStringLiteral("<figcaption>%1</figcaption>").arg(esc(b.figure.caption));
        out += QStringLiteral("</figure>\n");
        ++painted;
        if (progress) progress(static_cast<double>(painted) / static_cast<double>(std::max<size_t>(1, figures)));
        break;
      case Block::Kind::PageBreak: break;
    }
  }
  out += QStringLiteral("<footer>%1 · generated by SchedLab</footer></main></body></html>\n").arg(esc(doc.title));
  QFile file(path);
  const QByteArray bytes = out.toUtf8();
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) || file.write(bytes) != bytes.size() || !file.flush())
    return core::Error("cannot write " + path.toStdString() + ": " + file.errorString().toStdString());
  return {};
}

}  // namespace app::report
