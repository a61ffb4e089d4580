#pragma once
#include <string>

#include "cli/context.h"
#include "plan/model.h"

namespace dbform::cli {

// Human-readable plan: one block per action that does something (no-ops are only counted), then
// the summary line. Never contains a password (the plan holds none).
std::string render_plan_text(const Plan& plan, const Terminal& term);

// `resize {"cpu_millis":"2000","memory_gbs":"8"}`; an attachment to a VPC not created yet names it.
std::string call_text(const PlannedCall& call);

// "Plan: 2 to create, 1 to update, 1 to wait for, 3 unchanged." plus adopt/conflict/orphan counts when present.
std::string plan_summary_line(const PlanSummary& s);

// What a plan from the state alone says about how current that state is: "From the state alone
// (--no-refresh): the state was last refreshed 3h 12m ago (at ...) by apply --refresh-only; ...".
std::string freshness_text(const StateFreshness& freshness);
// A service whose objects a refresh could not read from its catalogs: what a reviewer is told.
std::string catalogs_unread_text(const CatalogsUnread& unread);

}  // namespace dbform::cli
