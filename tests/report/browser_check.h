// An HTML page as a person sees it: opened in headless Chromium, the messages its console printed,
// each <svg>'s rendered box and drawn marks, and a screenshot of the whole page.
#pragma once

#include <string>
#include <vector>

namespace forgek::browser_check {

// One <svg> of the page as the browser laid it out.
struct PlotBox {
  std::string id;
  double width = 0, height = 0;  // its rendered box, CSS pixels
  int marks = 0;                 // elements of class "mark" (bars, points)
  int drawn_marks = 0;           // of those, the ones with a box of non-zero width and height
  int marks_outside = 0;         // of those, the ones whose box leaves the svg's (by more than 1 px)
};

struct Page {
  std::string title;
  std::vector<std::string> console;  // every console message (the report has no script: none expected)
  std::vector<PlotBox> plots;
  int height = 0;  // the height of the document's content, CSS pixels
  int width = 0;   // the width of its content: above the 1280-pixel frame, something overflows
};

// The headless browser: `chromium-headless-shell` (Debian's package, which scripts/install-deps.sh
// installs) or `chromium` found in PATH; "" when neither is there.
std::string Browser();

// Opens `html_path` in `browser` through a harness page (it frames the page and measures it with the
// DOM's own layout), and fills `page`. The harness and the browser's profile live in a scratch folder
// of this call's own, so that tests may run browsers side by side. False with the reason when the
// browser cannot start, times out, or leaves no measurement.
bool Inspect(const std::string& browser, const std::string& html_path, Page* page, std::string* err);

// A PNG screenshot of `html_path` at 1280 CSS pixels wide and `height` tall, written to `png_path`.
bool Screenshot(const std::string& browser, const std::string& html_path, int height, const std::string& png_path,
                std::string* err);

// The width and height a PNG file's header gives; false when the file is not a PNG.
bool PngSize(const std::string& png_path, int* width, int* height);

}  // namespace forgek::browser_check
