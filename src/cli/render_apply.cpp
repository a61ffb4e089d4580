#include "cli/render_apply.h"

#include <algorithm>
#include <array>
#include <iostream>

#include "cli/render_events.h"
#include "cli/render_plan.h"
#include "cli/render_progress.h"
#include "cli/suggest.h"
#include "util/text.h"

namespace dbform::cli {

void ApplyOutput::warning(const Diagnostic& warning) { std::cerr << scrub(warning.str()) << "\n"; }

namespace {

// One row per resource with an endpoint (services, read replica sets), in aligned columns:
// address, host:port, status.
void print_endpoints(const Plan& plan, const State& state, std::ostream& out) {
  std::vector<std::array<std::string, 3>> rows;
  for (const auto& a : plan.actions) {
    if (a.action == Action::Orphan || a.action == Action::Conflict || a.action == Action::Delete)
      continue;
    const ResourceRecord* r = state.find(a.address);
    if (!r || r->endpoint_host.empty()) continue;
    rows.push_back({a.address, r->endpoint_host + (r->endpoint_port ? ":" + std::to_string(*r->endpoint_port) : ""),
                    r->status});
  }
  if (rows.empty()) return;
  size_t width[2] = {0, 0};
  for (const auto& row : rows)
    for (size_t c = 0; c < 2; ++c) width[c] = std::max(width[c], row[c].size());
  out << "\nEndpoints (passwords: dbform output ADDRESS.password):\n";
  for (const auto& row : rows)
    out << "  " << row[0] << std::string(width[0] - row[0].size() + 2, ' ') << row[1]
        << std::string(width[1] - row[1].size() + 2, ' ') << row[2] << "\n";
}

void print_failures(const ApplyResult& result) {
  if (result.failures.empty()) return;
  std::cerr << "Error: " << result.failures.size() << " resource(s) failed:\n";
  for (const auto& f : result.failures) std::cerr << "  " << with_run_flags(f) << "\n";
}

class TextApplyOutput : public ApplyOutput {
 public:
  TextApplyOutput(const Terminal& term, std::ostream& out) : term_(term), out_(out) {}

  void plan(const Plan& plan, const std::string& saved_from) override {
    if (!saved_from.empty()) out_ << "Applying the saved plan " << saved_from << ".\n\n";
    out_ << with_run_flags(render_plan_text(plan, term_));
  }
  void note(const std::string& text) override { out_ << text << "\n\n"; }
  void conflicts(const Plan&) override {}  // the plan above ends with the conflicts' error
  void nothing_to_do() override {}         // the plan above says "No changes."
  void cancelled() override { out_ << "Apply cancelled.\n"; }

  EventSink& start(const Plan& plan) override {
    out_ << "\n" << std::flush;
    if (!term_.live) {
      lines_ = std::make_unique<LineEventRenderer>(out_, term_);
      return *lines_;
    }
    live_ = std::make_unique<LiveProgressRenderer>(out_, term_);
    live_->track_waits(plan);
    return *live_;
  }

  void result(const Plan& plan, const State& state, const ApplyResult& r, int) override {
    if (live_) live_->finish();
    print_endpoints(plan, state, out_);
    out_ << "\nApply " << (r.failures.empty() && !r.interrupted ? "complete" : "finished with problems") << ": "
         << r.created << " created, " << r.updated << " updated, " << r.deleted << " deleted, " << r.adopted
         << " adopted, " << (r.imported ? std::to_string(r.imported) + " imported, " : "")
         << (r.forgotten ? std::to_string(r.forgotten) + " forgotten, " : "") << r.ready - r.paused << " ready, "
         << (r.paused ? std::to_string(r.paused) + " paused, " : std::string()) << r.failures.size()
         << " failed.\n";
    if (!r.left.empty()) {
      out_ << "Left for the next apply (--no-wait returned before what they need was READY):\n";
      for (const auto& a : r.left) out_ << "  " << a << "\n";
    }
    if (r.interrupted) {
      out_ << "Stopped by a signal. Not finished (run apply again to continue; nothing is created twice):\n";
      for (const auto& a : r.pending) out_ << "  " << a << "\n";
    }
    out_ << std::flush;
    print_failures(r);
  }

  void error(const std::string&) override {
    if (live_) live_->finish();  // main prints the error below the last frame
  }

 private:
  Terminal term_;
  std::ostream& out_;
  std::unique_ptr<LineEventRenderer> lines_;
  std::unique_ptr<LiveProgressRenderer> live_;
};

class JsonApplyOutput : public ApplyOutput {
 public:
  explicit JsonApplyOutput(std::ostream& out) : json_(out) {}

  void plan(const Plan& plan, const std::string& saved_from) override {
    json_.plan(plan, saved_from.empty() ? "manifests" : saved_from);
  }
  void note(const std::string&) override {}
  void conflicts(const Plan& plan) override {
    json_.error(std::to_string(plan.summary.conflict + plan.summary.policy) +
                " conflict(s): nothing can be applied until they are resolved (see the plan's conflict actions" +
                (plan.summary.policy ? std::string(" and its policies' mandatory violations)") : std::string(")")));
  }
  void nothing_to_do() override { json_.summary(ApplyResult{}, 0); }
  void cancelled() override {}  // --json never asks
  EventSink& start(const Plan&) override { return json_; }
  void result(const Plan&, const State&, const ApplyResult& r, int exit_code) override {
    json_.summary(r, exit_code);
    print_failures(r);
  }
  void error(const std::string& message) override { json_.error(message); }

 private:
  JsonLinesEventRenderer json_;
};

}  // namespace

std::unique_ptr<ApplyOutput> make_apply_output(bool json, const Terminal& term, std::ostream& out) {
  if (json) return std::make_unique<JsonApplyOutput>(out);
  return std::make_unique<TextApplyOutput>(term, out);
}

}  // namespace dbform::cli
