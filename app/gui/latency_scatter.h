// The latency scatter of the Latency tab: one dot per sample (time on x, log
// latency on y), coloured by task, painted with QPainter into a cached image —
// Qt Charts' scatter makes one graphics item per point, far too slow for the
// hundreds of thousands of wakeups of a large trace. Clicking asks for a jump.
#pragma once

#include <QImage>
#include <QString>
#include <QWidget>
#include <vector>

namespace app::gui {

class LatencyScatter : public QWidget {
  Q_OBJECT
 public:
  struct Dot {
    float xMs;
    float yUs;
    QRgb color;
  };
  struct LegendEntry {
    QString name;
    QRgb color;
  };
  explicit LatencyScatter(QWidget* parent = nullptr);
  /// Dots over [x0, x1] ms; y runs over the dots' own range (log, decades).
  void setData(QString title, std::vector<Dot> dots, double x0Ms, double x1Ms, std::vector<LegendEntry> legend);
  size_t dotCount() const { return m_dots.size(); }
  /// The plot area, in widget coordinates (tests click into it).
  QRect plotRect() const;
  QPointF valueAt(QPoint pos) const;  ///< (ms, us) under a point of the plot area
  QSize sizeHint() const override { return {640, 300}; }

 signals:
  void clicked(double xMs, double yUs);

 protected:
  void paintEvent(QPaintEvent*) override;
  void resizeEvent(QResizeEvent*) override;
  void mousePressEvent(QMouseEvent*) override;

 private:
  void render();
  double yOf(double us, const QRect& plot) const;
  double xOf(double ms, const QRect& plot) const;
  QString m_title;
  std::vector<Dot> m_dots;
  std::vector<LegendEntry> m_legend;
  double m_x0 = 0, m_x1 = 1;
  double m_logY0 = -1, m_logY1 = 4;
  QImage m_image;
};

}  // namespace app::gui
