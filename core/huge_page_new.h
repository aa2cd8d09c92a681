#pragma once

namespace core {

/// Whether this build's operator new advises its large blocks to use
/// transparent huge pages (core/huge_page_new.cpp): false under sanitizers,
/// whose runtimes bring their own operator new.
bool largeAllocationsAdviseHugePages();

}  // namespace core
