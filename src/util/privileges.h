#pragma once
// PostgreSQL's privileges, by the kind of object a grant is on (PostgreSQL's GRANT: a schema's
// USAGE and CREATE; a table's SELECT ... MAINTAIN; a sequence's USAGE, SELECT, UPDATE). The
// manifest checks a grant's list against it and the SQL side expands `ALL` with it, so both know
// one list. MAINTAIN exists from PostgreSQL 17: `ALL` on an older server means the others.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dbform {

enum class GrantTarget { Schema, Table, Sequence };

// "schema", "table", "sequence".
const char* grant_target_word(GrantTarget target);

// Every privilege the target's kind of object has on some server, in PostgreSQL's order.
const std::vector<std::string>& known_privileges(GrantTarget target);

// What `ALL` means on a server of `server_version_num` (150004, 170000...): the known privileges
// that server has.
std::vector<std::string> all_privileges(GrantTarget target, int server_version_num);

// The lowest server_version_num that has `privilege` on the target (0: every supported one).
int privilege_since(GrantTarget target, std::string_view privilege);

// The privilege as PostgreSQL spells it (upper case), when it is one of the target's or ALL;
// nullopt otherwise.
std::optional<std::string> canonical_privilege(GrantTarget target, std::string_view privilege);

}  // namespace dbform
