// The report of a sweep's results folder: a row per job (trace, model,
// parameters -> makespan, wakeup latency p50/p99, Jain's index, forced idle,
// energy, the trace's baseline fidelity verdict), the best and worst settings
// per trace and over all traces, and charts of each metric against each swept
// parameter, per model. PDF and HTML go through the run reports' document and
// writers; CSV has one row per job; JSON carries the same. Called by
// `schedlab-cli sweep-report`.
#pragma once

#include <QDateTime>
#include <QString>
#include <string>

#include "app/report/report.h"
#include "app/report/report_document.h"
#include "app/sweep/sweep_results.h"

namespace app::report {

/// A metric's value as every sweep table shows it: times adaptive ("1.234 ms"),
/// Jain's index with 4 decimals, energy in joules.
QString formatMetric(sweep::Metric metric, double value);

/// The document PDF and HTML show (tests read it).
Document buildSweepDocument(const sweep::SweepResults& results, const QDateTime& date);
/// One header line, then one line per job of the manifest; one column per parameter key.
std::string sweepCsv(const sweep::SweepResults& results);
std::string sweepJson(const sweep::SweepResults& results);

/// Errors: an unwritable file (named). PDF and HTML need a QGuiApplication (offscreen will do).
core::Status writeSweepReport(const sweep::SweepResults& results, const QString& path, ReportFormat format,
                              PageSize page = PageSize::A4, const QDateTime& date = {});

}  // namespace app::report
