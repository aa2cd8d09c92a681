// The report as a format-neutral list of blocks (headings, paragraphs, tables,
// figures painted by callbacks). The content builder fills it once; the PDF
// writer paginates it and the HTML writer serialises it, so both show the same
// content. Internal to app/report (tests read it to check content).
#pragma once

#include <QColor>
#include <QRectF>
#include <QString>
#include <functional>
#include <vector>

class QPainter;

namespace app::report {

/// How a cell or paragraph is emphasised. Worse/Better mark significant changes.
enum class Tone : uint8_t { Normal, Muted, Strong, Worse, Better, Warning };

struct Cell {
  QString text;
  Tone tone = Tone::Normal;
  QColor swatch;  ///< a small colour key before the text (task or run colour); invalid: none
  Cell() = default;
  Cell(QString t, Tone tn = Tone::Normal, QColor sw = {}) : text(std::move(t)), tone(tn), swatch(sw) {}  // NOLINT
  Cell(const char* t) : text(QString::fromUtf8(t)) {}  // NOLINT
};

struct Column {
  QString title;
  double weight = 1;     ///< share of the table width
  bool numeric = false;  ///< right-aligned
  bool wrap = false;     ///< long text wraps (otherwise elided)
};

struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
  bool header = true;
  bool dense = false;     ///< condensed font, for wide tables
  double widthFraction = 1.0;
  QString note;           ///< small print under the table
};

/// Paints into `rect` (device units of the painter's device); the same function
/// draws vector PDF and raster PNG for HTML.
using PaintFn = std::function<void(QPainter& p, const QRectF& rect)>;

struct Figure {
  PaintFn paint;
  double aspect = 0.5;  ///< height / width
  double widthFraction = 1.0;
  QString caption;
  QString alt;          ///< HTML alt text
  int rasterWidthPx = 1800;  ///< PNG width for HTML
  int rasterDpi = 0;  ///< logical dpi of that PNG; 0: as printed 16 cm wide (charts), 96 for timelines
};

struct Block {
  enum class Kind : uint8_t { Title, Heading, Subheading, Paragraph, Table, Figure, PageBreak, Contents };
  Kind kind = Kind::Paragraph;
  QString text;
  Tone tone = Tone::Normal;
  Table table;
  Figure figure;
};

struct Document {
  QString title;     ///< running footer
  QString subtitle;
  QString dateText;  ///< "Report date: ..." line (tests drop it when comparing)
  std::vector<Block> blocks;

  void title1(const QString& text) { blocks.push_back({Block::Kind::Title, text, Tone::Normal, {}, {}}); }
  void heading(const QString& text) { blocks.push_back({Block::Kind::Heading, text, Tone::Normal, {}, {}}); }
  void subheading(const QString& text) { blocks.push_back({Block::Kind::Subheading, text, Tone::Normal, {}, {}}); }
  void paragraph(const QString& text, Tone tone = Tone::Normal) {
    blocks.push_back({Block::Kind::Paragraph, text, tone, {}, {}});
  }
  void table(Table t) { blocks.push_back({Block::Kind::Table, {}, Tone::Normal, std::move(t), {}}); }
  void figure(Figure f) { blocks.push_back({Block::Kind::Figure, {}, Tone::Normal, {}, std::move(f)}); }
  void pageBreak() { blocks.push_back({Block::Kind::PageBreak, {}, Tone::Normal, {}, {}}); }
  void contents() { blocks.push_back({Block::Kind::Contents, {}, Tone::Normal, {}, {}}); }
};

/// Colours of the house style, shared by the PDF and HTML writers.
struct Theme {
  QColor text{0x1d, 0x21, 0x27};
  QColor muted{0x5f, 0x66, 0x70};
  QColor accent{0x1f, 0x4e, 0x8c};
  QColor rule{0xc9, 0xcf, 0xd6};
  QColor headerBack{0xe6, 0xeb, 0xf2};
  QColor zebra{0xf5, 0xf7, 0xfa};
  QColor worseBack{0xfb, 0xe0, 0xdd};
  QColor worseText{0x9b, 0x1c, 0x12};
  QColor betterBack{0xdf, 0xf1, 0xdc};
  QColor betterText{0x1e, 0x6b, 0x1e};
  QColor warningBack{0xff, 0xf1, 0xc7};
  QColor warningText{0x6b, 0x4a, 0x00};
  QString font = QStringLiteral("DejaVu Sans");
  QString denseFont = QStringLiteral("DejaVu Sans Condensed");
};
const Theme& theme();

}  // namespace app::report
