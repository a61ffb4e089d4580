#pragma once
// Shared fixture for the engine's tests: a real ApiClient over a FakeTransport, a FakeClock, an
// in-memory state store that keeps every snapshot, and an event recorder.
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/client.h"
#include "engine/apply.h"
#include "http/fake_transport.h"
#include "plan/differ.h"
#include "state/memory_store.h"
#include "util/clock.h"

namespace dbform::test {

// What `f` threw (an Error), or "(nothing thrown)".
inline std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

class EventLog : public EventSink {
 public:
  void on_event(const Event& e) override { events.push_back(e); }

  std::vector<Event> of(EventKind kind, const std::string& address = "") const {
    std::vector<Event> out;
    for (const auto& e : events)
      if (e.kind == kind && (address.empty() || e.address == address)) out.push_back(e);
    return out;
  }
  std::vector<EventKind> kinds_for(const std::string& address) const {
    std::vector<EventKind> out;
    for (const auto& e : events)
      if (e.address == address) out.push_back(e.kind);
    return out;
  }

  std::vector<Event> events;
};

inline std::string service_json(const std::string& id, const std::string& name, const std::string& status,
                                nlohmann::json extra = nlohmann::json::object()) {
  nlohmann::json j = {{"service_id", id}, {"project_id", "p1"}, {"name", name}};
  if (!status.empty()) j["status"] = status;
  j.update(extra);
  return j.dump();
}

// A FakeClock that counts how often the time is read: a main loop that spins shows up as thousands.
class CountingClock : public FakeClock {
 public:
  TimePoint now() const override {
    reads.fetch_add(1);
    return FakeClock::now();
  }
  mutable std::atomic<long> reads{0};
};

inline std::string path_of(const HttpRequest& r) { return FakeTransport::path_of(r.url); }

struct Harness {
  FakeTransport fake;
  CountingClock clock;
  ApiClient api{fake, clock, "https://api.test/v1", AuthScheme::Bearer,
                RetryPolicy{2, Duration(100), Duration(100), 7}};
  MemoryStateStore store;
  EventLog events;
  Manifest manifest;
  State state = new_state();
  ApplyOptions options;
  Plan plan;

  DesiredProject& project(const std::string& id) {
    for (auto& p : manifest.projects)
      if (p.id == id) return p;
    manifest.projects.push_back({});
    manifest.projects.back().id = id;
    return manifest.projects.back();
  }
  void vpc(const std::string& project_id, const std::string& name, const std::string& cidr = "10.0.0.0/16") {
    DesiredVpc v;
    v.name = name;
    v.cidr = cidr;
    v.region_code = "us-east-1";
    project(project_id).vpcs.push_back(v);
  }
  DesiredService& service(const std::string& project_id, const std::string& name) {
    DesiredService s;
    s.name = name;
    s.cpu_millis = "1000";
    s.memory_gbs = "4";
    project(project_id).services.push_back(s);
    return project(project_id).services.back();
  }
  // Records a service in the state exactly as declared, as an earlier run would have left it.
  ResourceRecord& recorded(const std::string& project_id, const std::string& name, const std::string& id,
                           const std::string& status, bool create_pending = false) {
    ResourceRecord r;
    r.address = resource_address(project_id, ResourceKind::Service, name);
    r.project_id = project_id;
    r.kind = ResourceKind::Service;
    r.name = name;
    for (const auto& s : project(project_id).services)
      if (s.name == name) r.settings = settings_json(s);
    r.id = id;
    r.status = status;
    r.create_pending = create_pending;
    return state.upsert(r);
  }
  // A service declared and recorded, as the earlier run that made it left it.
  ResourceRecord& made(const std::string& project_id, const std::string& name, const std::string& id,
                       const std::string& status) {
    service(project_id, name);
    return recorded(project_id, name, id, status);
  }

  std::map<std::string, ProjectKey> keys() const {
    std::map<std::string, ProjectKey> k;
    for (const auto& p : manifest.projects) k[p.id] = {"key-" + p.id, "DBFORM_API_KEY_" + p.id};
    return k;
  }

  // Unless a test scripts them itself, the name guard's lists (one per project with creates, of
  // services and of VPCs) find nothing.
  bool script_name_guard = true;

  ApplyResult apply() {
    plan = make_plan(manifest, state);
    if (script_name_guard)
      for (const auto& project : projects_with_work(plan)) {
        bool creates = false;
        for (const auto& a : plan.actions) creates = creates || (a.project_id == project && a.action == Action::Create);
        if (!creates) continue;
        fake.first("GET", "/projects/" + project + "/services", FakeTransport::response(200, "[]"));
        fake.first("GET", "/projects/" + project + "/vpcs", FakeTransport::response(200, "[]"));
      }
    ApplyEngine engine(api, store, clock, events, options);
    return engine.apply(plan, keys(), state);
  }
};

// Highest number of requests seen inside a handler at once.
struct ConcurrencyMeter {
  std::mutex mu;
  int current = 0, max = 0;
  void enter() {
    std::lock_guard<std::mutex> lock(mu);
    max = std::max(max, ++current);
  }
  void leave() {
    std::lock_guard<std::mutex> lock(mu);
    --current;
  }
};

}  // namespace dbform::test
