// The bar plots of `report --torch`: per operator, the seal's, torch eager's and torch.compile's
// times side by side per config, as scripts/compare_torch.py timed them.
#include <algorithm>

#include "report_plots.h"

namespace forgek::report_plots {

std::vector<svg::Plot> Torch(const Report& r) {
  std::vector<std::string> ops;
  for (const ConfigRow& c : r.configs)
    if (c.torch && std::find(ops.begin(), ops.end(), c.op) == ops.end()) ops.push_back(c.op);
  std::vector<svg::Plot> out;
  for (const std::string& op : ops) {
    svg::Plot p;
    p.title = "Against PyTorch: " + op;
    p.x.label = "config";
    p.y = {"time, us (median)", svg::Scale::linear, false, true};
    p.series = {{"seal"}, {"torch eager"}, {"torch.compile"}};
    std::vector<double> ys;
    for (const ConfigRow& c : r.configs) {
      // One group per config: a config served on two archs was timed once.
      if (c.op != op || !c.torch || std::find(p.categories.begin(), p.categories.end(), c.config) != p.categories.end())
        continue;
      const double x = static_cast<double>(p.categories.size());
      p.categories.push_back(c.config);
      const TorchConfig& n = c.torch->numbers;
      const double times[] = {n.seal_us, n.eager_us, n.compile_us};
      for (size_t k = 0; k < 3; ++k)
        if (times[k] > 0) {
          p.series[k].points.push_back({x, times[k]});
          ys.push_back(times[k]);
        }
    }
    // An operator with no time at all (its seal wrong or not run on any config) has nothing to draw:
    // its table rows say why. The ids stay consecutive over the plots drawn.
    if (ys.empty()) continue;
    p.id = "plot-torch-" + std::to_string(out.size());
    for (svg::Series& s : p.series) s.bars = true;
    // Configs of one operator may differ by decades: a log axis keeps the small ones visible.
    p.y.scale = svg::ScaleFor(ys);
    p.width = 272 + 110 * static_cast<int>(std::max<size_t>(p.categories.size(), 2));
    p.height = 300;
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace forgek::report_plots
