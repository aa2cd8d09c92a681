// Paginates a report Document onto a QPdfWriter: text stays text (pdftotext
// and search find task names and numbers), charts and timelines are vector
// drawing, tables split across pages with their header repeated, headings
// keep with what follows, every page carries the title and "page i of n".
#include <QFontMetricsF>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <algorithm>
#include <cmath>
#include <map>

#include "app/report/report_data.h"
#include "app/report/report_figures.h"

namespace app::report {

namespace {

struct Fonts {
  QFont title, heading, subheading, body, small, table, tableBold, dense, denseBold, footer;
};

Fonts makeFonts() {
  const Theme& th = theme();
  auto f = [](const QString& family, double pt, bool bold = false) {
    QFont font(family);
    font.setPointSizeF(pt);
    font.setBold(bold);
    // Glyph positions from unhinted outlines: even spacing at any zoom.
    font.setHintingPreference(QFont::PreferNoHinting);
    // No ligatures: "ff" stays two letters in the PDF's text, so a search for
    // a task or a word finds it (shaping would emit U+FB00).
    font.setStyleStrategy(QFont::PreferNoShaping);
    return font;
  };
  // Sizes on the 0.75 pt grid: the writer's 96 dpi makes Qt size fonts in whole pixels.
  return {f(th.font, 21, true), f(th.font, 13.5, true),     f(th.font, 10.5, true), f(th.font, 9),
          f(th.font, 7.5),      f(th.font, 7.5),            f(th.font, 7.5, true),  f(th.denseFont, 7.5),
          f(th.denseFont, 7.5, true), f(th.font, 6.75)};
}

// One thing placed on a page.
struct Placed {
  size_t block = 0;
  QRectF rect;
  size_t rowFrom = 0, rowTo = 0;  // tables: the rows on this page
  bool tableHeader = false;
  bool tableNote = false;
  bool continued = false;         // a table or heading continued from the previous page
};
struct Page {
  std::vector<Placed> items;
};

class PdfLayout {
 public:
  PdfLayout(const Document& doc, QPdfWriter& writer, PageSize page)
      : m_doc(doc), m_writer(writer), m_fonts(makeFonts()) {
    const QPageSize size(page == PageSize::Letter ? QPageSize::Letter : QPageSize::A4);
    m_writer.setPageSize(size);
    m_writer.setPageMargins(QMarginsF(0, 0, 0, 0), QPageLayout::Millimeter);
    // 96 dpi: the timeline renderer sizes some fonts in pixels and some in
    // points, which agree only at a screen's resolution (see report_figures.h).
    // Coordinates are floating point, so nothing is lost in the vector output.
    m_writer.setResolution(kTimelineDpi);
    m_u = m_writer.resolution() / 72.0;  // device units per point
    const QSizeF pts = size.size(QPageSize::Point);
    m_page = QSizeF(pts.width() * m_u, pts.height() * m_u);
    const double mm = 72.0 / 25.4 * m_u;
    m_content = QRectF(16 * mm, 15 * mm, m_page.width() - 32 * mm, m_page.height() - 15 * mm - 18 * mm);
  }

  std::vector<Page> layout() {
    m_pages.assign(1, Page{});
    m_y = m_content.top();
    for (size_t i = 0; i < m_doc.blocks.size(); ++i) {
      const Block& b = m_doc.blocks[i];
      switch (b.kind) {
        case Block::Kind::PageBreak:
          if (m_y > m_content.top()) newPage();
          break;
        case Block::Kind::Title:
          placeText(i, m_fonts.title, 0, 6 * m_u, 0);
          break;
        case Block::Kind::Heading:
          placeText(i, m_fonts.heading, 14 * m_u, 6 * m_u, leadHeight(i + 1));
          break;
        case Block::Kind::Subheading:
          placeText(i, m_fonts.subheading, 9 * m_u, 4 * m_u, leadHeight(i + 1));
          break;
        case Block::Kind::Paragraph:
          placeText(i, paragraphFont(b.tone), 0, 6 * m_u, 0, b.tone == Tone::Warning ? 4 * m_u : 0);
          break;
        case Block::Kind::Contents: placeContents(i); break;
        case Block::Kind::Table: placeTable(i); break;
        case Block::Kind::Figure: placeFigure(i); break;
      }
    }
    return m_pages;
  }

  void paint(QPainter& p, const std::vector<Page>& pages, const ProgressFn& progress, std::stop_token stop,
             bool& cancelled) {
    // Where each heading landed, for the contents.
    for (size_t pg = 0; pg < pages.size(); ++pg)
      for (const Placed& it : pages[pg].items)
        if (m_doc.blocks[it.block].kind == Block::Kind::Heading && !it.continued && !m_headingPage.count(it.block))
          m_headingPage[it.block] = static_cast<int>(pg) + 1;
    for (size_t pg = 0; pg < pages.size(); ++pg) {
      if (stop.stop_requested()) {
        cancelled = true;
        return;
      }
      if (pg > 0) m_writer.newPage();
      for (const Placed& it : pages[pg].items) paintItem(p, it);
      paintFooter(p, static_cast<int>(pg) + 1, static_cast<int>(pages.size()));
      if (progress) progress(static_cast<double>(pg + 1) / static_cast<double>(pages.size()));
    }
  }

 private:
  const Theme& th() const { return theme(); }
  QFontMetricsF metrics(const QFont& f) const { return QFontMetricsF(f, &m_writer); }
  QFont paragraphFont(Tone tone) const {
    QFont f = tone == Tone::Muted ? m_fonts.small : m_fonts.body;
    f.setBold(tone == Tone::Strong);
    return f;
  }
  double remaining() const { return m_content.bottom() - m_y; }
  void newPage() {
    m_pages.emplace_back();
    m_y = m_content.top();
  }
  double textHeight(const QFont& f, const QString& text, double width) const {
    return metrics(f).boundingRect(QRectF(0, 0, width, 1e9), Qt::TextWordWrap, text).height();
  }

  // The room block i needs at the top of the page it starts on: a heading with
  // the start of what follows it, a table's header and first rows, a figure.
  double leadHeight(size_t i, int depth = 0) const {
    if (i >= m_doc.blocks.size() || depth > 3) return 0;
    const Block& b = m_doc.blocks[i];
    const double w = m_content.width();
    double h = 0;
    switch (b.kind) {
      case Block::Kind::Heading: h = textHeight(m_fonts.heading, b.text, w) + 20 * m_u + leadHeight(i + 1, depth + 1); break;
      case Block::Kind::Subheading: h = textHeight(m_fonts.subheading, b.text, w) + 13 * m_u + leadHeight(i + 1, depth + 1); break;
      case Block::Kind::Paragraph: h = textHeight(paragraphFont(b.tone), b.text, w); break;
      case Block::Kind::Table: {
        h = b.table.header ? rowHeight(b.table, headerRow(b.table), true) : 0;
        for (size_t r = 0; r < std::min<size_t>(3, b.table.rows.size()); ++r) h += rowHeight(b.table, b.table.rows[r], false);
        break;
      }
      case Block::Kind::Figure: h = std::min(m_content.height() * 0.9, w * b.figure.widthFraction * b.figure.aspect); break;
      case Block::Kind::Title:
      case Block::Kind::Contents:
      case Block::Kind::PageBreak: break;
    }
    return std::min(h, m_content.height() * 0.75);
  }

  // keepWith: room that must remain below the text (a heading stays with what follows).
  void placeText(size_t i, const QFont& f, double before, double after, double keepWith, double pad = 0) {
    const QString& text = m_doc.blocks[i].text;
    const double h = textHeight(f, text, m_content.width() - 2 * pad) + 2 * pad;
    const double space = m_y > m_content.top() ? before : 0;
    if (m_y + space + h + keepWith > m_content.bottom() && m_y > m_content.top()) newPage();
    if (m_y > m_content.top()) m_y += before;
    m_pages.back().items.push_back({i, QRectF(m_content.left(), m_y, m_content.width(), h)});
    m_y += h + after;
  }

  void placeContents(size_t i) {
    int entries = 0;
    for (const Block& b : m_doc.blocks) entries += b.kind == Block::Kind::Heading ? 1 : 0;
    const double lineH = metrics(m_fonts.body).height() * 1.35;
    const double h = lineH * entries;
    if (m_y + h > m_content.bottom()) newPage();
    m_pages.back().items.push_back({i, QRectF(m_content.left(), m_y, m_content.width() * 0.7, h)});
    m_y += h + 6 * m_u;
  }

  const QFont& cellFont(const Table& t, const Cell& c, bool header) const {
    const bool bold = header || c.tone == Tone::Strong || c.tone == Tone::Worse || c.tone == Tone::Better;
    if (t.dense) return bold ? m_fonts.denseBold : m_fonts.dense;
    return bold ? m_fonts.tableBold : m_fonts.table;
  }
  double cellPad() const { return 2.6 * m_u; }
  std::vector<double> columnWidths(const Table& t) const {
    double total = 0;
    for (const auto& c : t.columns) total += c.weight;
    std::vector<double> w;
    const double width = m_content.width() * t.widthFraction;
    for (const auto& c : t.columns) w.push_back(width * c.weight / std::max(1e-9, total));
    return w;
  }
  double rowHeight(const Table& t, const std::vector<Cell>& row, bool header) const {
    const auto widths = columnWidths(t);
    double h = 0;
    for (size_t c = 0; c < t.columns.size() && c < row.size(); ++c) {
      const QFont& f = cellFont(t, row[c], header);
      const bool wrap = header || t.columns[c].wrap;
      const double inner = widths[c] - 2 * cellPad() - (row[c].swatch.isValid() ? 8 * m_u : 0);
      h = std::max(h, wrap ? textHeight(f, row[c].text, inner) : metrics(f).height());
    }
    return h + 2 * cellPad() * 0.6;
  }
  std::vector<Cell> headerRow(const Table& t) const {
    std::vector<Cell> cells;
    for (const auto& c : t.columns) cells.emplace_back(c.title);
    return cells;
  }

  void placeTable(size_t i) {
    const Table& t = m_doc.blocks[i].table;
    const double headerH = t.header ? rowHeight(t, headerRow(t), true) : 0;
    const double x = m_content.left();
    const double width = m_content.width() * t.widthFraction;
    size_t r = 0;
    bool continued = false;
    std::vector<double> heights;
    for (const auto& row : t.rows) heights.push_back(rowHeight(t, row, false));
    // Keep at least three rows (or all) with the header.
    const double minStart = headerH + [&] {
      double s = 0;
      for (size_t k = 0; k < std::min<size_t>(3, heights.size()); ++k) s += heights[k];
      return s;
    }();
    if (m_y + minStart > m_content.bottom() && m_y > m_content.top()) newPage();
    while (true) {
      double y = m_y;
      if (t.header) {
        m_pages.back().items.push_back({i, QRectF(x, y, width, headerH), 0, 0, true, false, continued});
        y += headerH;
      }
      const size_t from = r;
      const double rowsTop = y;
      while (r < t.rows.size() && (y + heights[r] <= m_content.bottom() || r == from)) y += heights[r++];
      // No widows: a table that breaks leaves at least three rows for the next page.
      const size_t kWidow = 3;
      if (r < t.rows.size() && t.rows.size() - r < kWidow && r - from > 2 * kWidow) {
        while (t.rows.size() - r < kWidow) y -= heights[--r];
      }
      m_pages.back().items.push_back({i, QRectF(x, rowsTop, width, y - rowsTop), from, r, false, false, continued});
      m_y = y;
      if (r >= t.rows.size()) break;
      newPage();
      continued = true;
    }
    if (!t.note.isEmpty()) {
      const double h = textHeight(m_fonts.small, t.note, width);
      if (m_y + h + 2 * m_u > m_content.bottom()) newPage();
      m_pages.back().items.push_back({i, QRectF(x, m_y + 2 * m_u, width, h), 0, 0, false, true, false});
      m_y += h + 2 * m_u;
    }
    m_y += 9 * m_u;
  }

  void placeFigure(size_t i) {
    const Figure& f = m_doc.blocks[i].figure;
    double w = m_content.width() * f.widthFraction;
    double h = w * f.aspect;
    const double capH = f.caption.isEmpty() ? 0 : textHeight(m_fonts.small, f.caption, m_content.width()) + 3 * m_u;
    const double maxH = m_content.height() - capH;
    if (h > maxH) {  // taller than a page: shrink, keeping the proportions
      w *= maxH / h;
      h = maxH;
    }
    if (m_y + h + capH > m_content.bottom() && m_y > m_content.top()) newPage();
    m_pages.back().items.push_back({i, QRectF(m_content.left() + (m_content.width() - w) / 2, m_y, w, h)});
    m_y += h;
    if (capH > 0) {
      m_pages.back().items.push_back(
          {i, QRectF(m_content.left(), m_y + 3 * m_u, m_content.width(), capH - 3 * m_u), 0, 0, false, true});
      m_y += capH;
    }
    m_y += 10 * m_u;
  }

  void paintItem(QPainter& p, const Placed& it) {
    const Block& b = m_doc.blocks[it.block];
    p.save();
    switch (b.kind) {
      case Block::Kind::Title:
        p.setFont(m_fonts.title);
        p.setPen(th().accent);
        p.drawText(it.rect, Qt::TextWordWrap, b.text);
        break;
      case Block::Kind::Heading:
        p.setFont(m_fonts.heading);
        p.setPen(th().accent);
        p.drawText(it.rect, Qt::TextWordWrap, b.text);
        p.setPen(QPen(th().rule, 0.8 * m_u));
        p.drawLine(QPointF(it.rect.left(), it.rect.bottom() + 2 * m_u), QPointF(m_content.right(), it.rect.bottom() + 2 * m_u));
        break;
      case Block::Kind::Subheading:
        p.setFont(m_fonts.subheading);
        p.setPen(th().text);
        p.drawText(it.rect, Qt::TextWordWrap, b.text);
        break;
      case Block::Kind::Paragraph: {
        p.setFont(paragraphFont(b.tone));
        QRectF r = it.rect;
        if (b.tone == Tone::Warning) {
          p.fillRect(r, th().warningBack);
          r.adjust(4 * m_u, 4 * m_u, -4 * m_u, -4 * m_u);
        }
        p.setPen(b.tone == Tone::Muted ? th().muted : b.tone == Tone::Warning ? th().warningText : th().text);
        p.drawText(r, Qt::TextWordWrap, b.text);
        break;
      }
      case Block::Kind::Contents: paintContents(p, it); break;
      case Block::Kind::Table: paintTable(p, it, b.table); break;
      case Block::Kind::Figure:
        if (it.tableNote) {
          p.setFont(m_fonts.small);
          p.setPen(th().muted);
          p.drawText(it.rect, Qt::TextWordWrap | Qt::AlignHCenter, b.figure.caption);
        } else if (b.figure.paint) {
          p.setClipRect(it.rect.adjusted(-m_u, -m_u, m_u, m_u));
          b.figure.paint(p, it.rect);
        }
        break;
      case Block::Kind::PageBreak: break;
    }
    p.restore();
  }

  void paintContents(QPainter& p, const Placed& it) {
    const QFontMetricsF fm = metrics(m_fonts.body);
    const double lineH = fm.height() * 1.35;
    double y = it.rect.top();
    int n = 0;
    p.setFont(m_fonts.body);
    for (size_t i = 0; i < m_doc.blocks.size(); ++i) {
      if (m_doc.blocks[i].kind != Block::Kind::Heading) continue;
      ++n;
      const QString page = m_headingPage.count(i) ? QString::number(m_headingPage.at(i)) : QStringLiteral("?");
      const QRectF line(it.rect.left(), y, it.rect.width(), lineH);
      p.setPen(th().text);
      const QString label = QStringLiteral("%1  %2").arg(n).arg(m_doc.blocks[i].text);
      p.drawText(line, Qt::AlignLeft | Qt::AlignVCenter, label);
      p.drawText(line, Qt::AlignRight | Qt::AlignVCenter, page);
      p.setPen(QPen(th().rule, 0.5 * m_u, Qt::DotLine));
      const double x0 = line.left() + fm.horizontalAdvance(label) + 4 * m_u;
      const double x1 = line.right() - fm.horizontalAdvance(page) - 4 * m_u;
      if (x1 > x0) p.drawLine(QPointF(x0, line.center().y() + fm.ascent() / 3), QPointF(x1, line.center().y() + fm.ascent() / 3));
      y += lineH;
    }
  }

  void paintRow(QPainter& p, const Table& t, const std::vector<Cell>& row, double y, double h, bool header,
                bool zebra) {
    const auto widths = columnWidths(t);
    double x = m_content.left();
    const double width = m_content.width() * t.widthFraction;
    if (header) p.fillRect(QRectF(x, y, width, h), th().headerBack);
    else if (zebra) p.fillRect(QRectF(x, y, width, h), th().zebra);
    for (size_t c = 0; c < t.columns.size() && c < row.size(); ++c) {
      const Cell& cell = row[c];
      const QRectF box(x, y, widths[c], h);
      if (!header && (cell.tone == Tone::Worse || cell.tone == Tone::Better || cell.tone == Tone::Warning))
        p.fillRect(box, cell.tone == Tone::Worse    ? th().worseBack
                        : cell.tone == Tone::Better ? th().betterBack
                                                    : th().warningBack);
      QRectF inner = box.adjusted(cellPad(), cellPad() * 0.6, -cellPad(), -cellPad() * 0.6);
      if (cell.swatch.isValid()) {
        const double s = 5.5 * m_u;
        p.fillRect(QRectF(inner.left(), inner.top() + (metrics(cellFont(t, cell, header)).height() - s) / 2, s, s),
                   cell.swatch);
        inner.setLeft(inner.left() + 8 * m_u);
      }
      QFont f = cellFont(t, cell, header);
      // A cell too wide for its column is set smaller before it is elided;
      // numbers shrink further, as an elided number is no number.
      if (!header && !t.columns[c].wrap) {
        const double need = metrics(f).horizontalAdvance(cell.text);
        if (need > inner.width() && need > 0) {
          const double minScale = t.columns[c].numeric ? 0.62 : 0.8;
          // Whole pixels: at the writer's 96 dpi Qt sizes fonts in whole pixels (0.75 pt).
          const double px = f.pointSizeF() / 0.75;
          const double fit = std::floor(px * inner.width() / need);
          f.setPointSizeF(0.75 * std::max(std::ceil(px * minScale), fit));
        }
      }
      p.setFont(f);
      p.setPen(header                       ? th().text
               : cell.tone == Tone::Muted   ? th().muted
               : cell.tone == Tone::Worse   ? th().worseText
               : cell.tone == Tone::Better  ? th().betterText
               : cell.tone == Tone::Warning ? th().warningText
                                            : th().text);
      const Qt::Alignment align = (t.columns[c].numeric ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignTop;
      if (header || t.columns[c].wrap) {
        p.drawText(inner, align | Qt::TextWordWrap, cell.text);
      } else {
        p.drawText(inner, align, metrics(f).elidedText(cell.text, Qt::ElideRight, inner.width()));
      }
      x += widths[c];
    }
  }

  void paintTable(QPainter& p, const Placed& it, const Table& t) {
    if (it.tableNote) {
      p.setFont(m_fonts.small);
      p.setPen(th().muted);
      p.drawText(it.rect, Qt::TextWordWrap, t.note);
      return;
    }
    if (it.tableHeader) {
      paintRow(p, t, headerRow(t), it.rect.top(), it.rect.height(), true, false);
      p.setPen(QPen(th().rule, 0.8 * m_u));
      p.drawLine(it.rect.bottomLeft(), it.rect.bottomRight());
      return;
    }
    double y = it.rect.top();
    for (size_t r = it.rowFrom; r < it.rowTo; ++r) {
      const double h = rowHeight(t, t.rows[r], false);
      paintRow(p, t, t.rows[r], y, h, false, r % 2 == 1);
      y += h;
    }
    p.setPen(QPen(th().rule, 0.8 * m_u));
    p.drawLine(QPointF(it.rect.left(), y), QPointF(it.rect.right(), y));
    if (!t.header && it.rowFrom == 0) p.drawLine(it.rect.topLeft(), it.rect.topRight());
  }

  void paintFooter(QPainter& p, int page, int pages) {
    p.save();
    p.setFont(m_fonts.footer);
    p.setPen(th().muted);
    const double y = m_content.bottom() + 8 * m_u;
    const QRectF line(m_content.left(), y, m_content.width(), metrics(m_fonts.footer).height());
    p.setPen(QPen(th().rule, 0.5 * m_u));
    p.drawLine(QPointF(line.left(), y - 2 * m_u), QPointF(line.right(), y - 2 * m_u));
    p.setPen(th().muted);
    const QString right = QStringLiteral("page %1 of %2").arg(page).arg(pages);
    const QFontMetricsF fm = metrics(m_fonts.footer);
    p.drawText(line, Qt::AlignLeft | Qt::AlignTop,
               fm.elidedText(m_doc.title, Qt::ElideMiddle, line.width() - fm.horizontalAdvance(right) - 20 * m_u));
    p.drawText(line, Qt::AlignRight | Qt::AlignTop, right);
    p.restore();
  }

  const Document& m_doc;
  QPdfWriter& m_writer;
  Fonts m_fonts;
  double m_u = 1;
  QSizeF m_page;
  QRectF m_content;
  std::vector<Page> m_pages;
  double m_y = 0;
  std::map<size_t, int> m_headingPage;
};

}  // namespace

core::Status writePdf(const Document& doc, const QString& path, PageSize page, const ProgressFn& progress,
                      std::stop_token stop) {
  QPdfWriter writer(path);
  writer.setTitle(doc.title);
  writer.setCreator(QStringLiteral("SchedLab"));
  PdfLayout layout(doc, writer, page);
  const auto pages = layout.layout();
  QPainter p;
  if (!p.begin(&writer)) return core::Error("cannot write " + path.toStdString() + " (is the folder writable?)");
  bool cancelled = false;
  layout.paint(p, pages, progress, stop, cancelled);
  if (!p.end()) return core::Error("cannot finish writing " + path.toStdString());
  if (cancelled) return core::Error("report cancelled");
  return {};
}

}  // namespace app::report
