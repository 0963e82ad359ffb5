// Text compiled into kq at build time (core/CMakeLists.txt, cmake/KqEmbedText.cmake), so that
// report.html is self-contained and renders with no network.
#pragma once
#include <string_view>

namespace kq {

// Chart.js (the UMD build, minified) from Debian's libjs-chart.js, with its licence banner.
std::string_view chartjs_source();
// core/report/report_html.js: report.html's script that draws the plots with Chart.js.
std::string_view report_html_script();

}  // namespace kq
