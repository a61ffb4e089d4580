#pragma once
// The refresh of what lives inside the services' databases (roles, schemas, extensions, grants):
// each service's recorded objects read from its catalogs as its admin, in one read-only
// transaction whose queries the server ends past a statement timeout, so that a plan shows what
// was changed there outside dbform (a revoked grant, a role's changed limit, a dropped extension).
// A service whose catalogs cannot be read (no key to open its password, as in a pull request; an
// endpoint that does not answer) is planned from its objects' records, and the refresh says why:
// it never fails for that.
#include <map>
#include <string>
#include <vector>

#include "plan/model.h"
#include "sql/session.h"
#include "state/model.h"
#include "util/clock.h"

namespace dbform {

// How long one query of the read may take on the server; the connection's own wait is shorter.
inline constexpr Duration kCatalogStatementTimeout = std::chrono::seconds(15);
inline constexpr Duration kCatalogConnectTimeout = std::chrono::seconds(10);

struct CatalogRefresh {
  std::map<std::string, std::string> read_at;  // service address -> when its catalogs were read (UTC)
  std::vector<CatalogsUnread> unread;          // in address order
  std::vector<std::string> changed;            // object addresses whose record the read changed
  std::vector<std::string> dropped;            // of those, the ones the catalogs no longer show
};

// Reads the catalogs of every service of `projects` that has object records (the created ones),
// through `sql` (null: none is read, each says so), `parallelism` services at once, and records in
// `state` (the caller's copy) what they show: `observed` in the manifest's terms as `plan` declares
// the object (its record's settings for one no longer declared), or `deleted_outside` for one the
// catalogs do not show. `last_read`: when each service's catalogs were last read by a run that
// recorded it (the state's stamp), said of those not read now.
CatalogRefresh refresh_catalogs(State& state, const Plan& plan, const std::vector<std::string>& projects,
                                const SqlConnector* sql, Clock& clock, int parallelism);

}  // namespace dbform
