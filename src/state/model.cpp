#include "state/model.h"
#include "state/previews.h"

#include <openssl/rand.h>

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "util/error.h"

namespace dbform {

Secret Secret::sealed(nlohmann::json envelope, std::string bound_to) {
  Secret s;
  s.sealed_ = std::move(envelope);
  s.bound_to_ = std::move(bound_to);
  return s;
}

Secret Secret::unreadable(std::string table) {
  Secret s;
  s.unreadable_in_ = std::move(table);
  return s;
}

const std::string& Secret::text() const {
  if (is_unreadable())
    throw Error("this role has no access to secrets: it may not read the table " + unreadable_in_ +
                ", which holds the state's passwords. Run this with a role granted SELECT on " + unreadable_in_ +
                " (see docs/state.md, \"Team state on PostgreSQL\")");
  if (is_sealed())
    throw Error("a password in the state is sealed and no key opens it: set DBFORM_STATE_PASSPHRASE or "
                "DBFORM_STATE_KEY_FILE to the state's key");
  return clear_;
}

std::string secret_binding(const ResourceRecord& r) {
  return std::string(kind_name(r.kind)) + "\n" + r.project_id + "\n" + r.id;
}

bool is_paused_status(const std::string& status) { return status == "PAUSED" || status == "PAUSING"; }

bool is_failed_status(const std::string& status) {
  return status == "DELETING" || status == "DELETED";
}

void State::reindex() const {
  index_.clear();
  index_.reserve(resources.size());
  for (size_t i = 0; i < resources.size(); ++i) index_[resources[i].address] = i;
}

const ResourceRecord* State::find(const std::string& address) const {
  // upsert() and remove() keep the index; records added to `resources` directly (the codec) are
  // picked up by the size check, and a record moved behind the index's back by the address check.
  if (index_.size() != resources.size()) reindex();
  auto it = index_.find(address);
  if (it == index_.end()) return nullptr;
  if (it->second >= resources.size() || resources[it->second].address != address) {
    reindex();
    it = index_.find(address);
    if (it == index_.end()) return nullptr;
  }
  return &resources[it->second];
}

ResourceRecord* State::find(const std::string& address) {
  return const_cast<ResourceRecord*>(static_cast<const State*>(this)->find(address));
}

ResourceRecord& State::upsert(const ResourceRecord& r) {
  if (ResourceRecord* existing = find(r.address)) {
    *existing = r;
    return *existing;
  }
  resources.push_back(r);
  index_[r.address] = resources.size() - 1;
  return resources.back();
}

bool State::remove(const std::string& address) {
  if (!find(address)) return false;
  std::erase_if(resources, [&](const ResourceRecord& r) { return r.address == address; });
  reindex();
  return true;
}

std::string unmovable_reason(const ResourceRecord& rec) {
  if (is_preview_record(rec))
    return "`" + rec.address + "` is a preview's fork: its address and name come from the preview; `dbform preview "
           "down` and `dbform preview up --reset` manage it";
  if (!rec.create_pending || !rec.id.empty()) return "";
  return "the earlier create of `" + rec.address + "` stopped before its outcome was known, and it is found by the "
         "name it was sent with: apply under the old name to settle it first, then rename";
}

const ResourceRecord* password_record(const State& state, const ResourceRecord& r) {
  if (kind_form(r.kind).password != PasswordOwner::Parent) return &r;
  return state.find(resource_address(r.project_id, *parent_kind(r.kind), r.parent));
}

std::vector<std::string> move_record(State& state, const std::string& from, const std::string& to,
                                     const std::string& new_name) {
  ResourceRecord moved = *state.find(from);
  const std::string old_name = moved.name;
  state.remove(from);
  moved.address = to;
  moved.name = new_name;
  state.upsert(moved);
  std::vector<std::string> changed = {from, to};
  std::vector<ResourceRecord> children;
  for (const auto& r : state.resources)
    if (parent_kind(r.kind) == moved.kind && r.project_id == moved.project_id && r.parent == old_name)
      children.push_back(r);
  for (auto& child : children) {
    changed.push_back(child.address);
    state.remove(child.address);
    child.parent = new_name;
    child.address = resource_address(child.project_id, child.kind, child.name, child.parent);
    changed.push_back(child.address);
    state.upsert(child);
  }
  for (auto& r : state.resources) {
    const auto refers = kind_form(r.kind).refers;  // a service's `vpc` names the VPC it is attached to
    if (!refers || refers->kind != moved.kind || r.project_id != moved.project_id) continue;
    bool touched = false;
    for (nlohmann::json* view : {&r.settings, &r.observed})
      if (view->is_object() && view->value(refers->field, nlohmann::json()) == old_name) {
        (*view)[refers->field] = new_name;
        touched = true;
      }
    if (touched) changed.push_back(r.address);
  }
  return changed;
}

std::string new_uuid() {
  unsigned char b[16];
  if (RAND_bytes(b, sizeof b) != 1) throw std::runtime_error("no randomness available for a state lineage");
  b[6] = (b[6] & 0x0f) | 0x40;  // version 4
  b[8] = (b[8] & 0x3f) | 0x80;  // RFC 4122 variant
  char out[37];
  std::snprintf(out, sizeof out, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return out;
}

namespace {

// Segment by segment: "orders" < "orders-2" as names, and a record before what lives in it.
bool address_before(std::string_view a, std::string_view b) {
  while (!a.empty() && !b.empty()) {
    const size_t i = a.find('/'), j = b.find('/');
    const std::string_view x = a.substr(0, i), y = b.substr(0, j);
    if (x != y) return x < y;
    a = i == std::string_view::npos ? std::string_view() : a.substr(i + 1);
    b = j == std::string_view::npos ? std::string_view() : b.substr(j + 1);
  }
  return a.empty() && !b.empty();
}

}  // namespace

std::vector<const ResourceRecord*> records_by_address(const State& state) {
  std::vector<const ResourceRecord*> out;
  out.reserve(state.resources.size());
  for (const auto& r : state.resources) out.push_back(&r);
  std::stable_sort(out.begin(), out.end(),
                   [](const ResourceRecord* x, const ResourceRecord* y) { return address_before(x->address, y->address); });
  return out;
}

State new_state() {
  State s;
  s.lineage = new_uuid();
  return s;
}

}  // namespace dbform
