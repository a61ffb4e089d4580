// `dbform state list | show | rm`.
#include <iostream>

#include "cli/address.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "state/codec.h"

namespace dbform::cli {

void add_state_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<StateOptions>();
  auto targets = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand("state", "inspect or edit the state");
  cmd->require_subcommand(1);

  auto* list = cmd->add_subcommand("list", "addresses of every recorded resource");
  add_state_options(*list, *opts, false);
  list->callback([opts, &exit_code] {
    auto store = open_state_store(*opts);
    for (const auto& r : read_state(*store).resources) std::cout << r.address << "\n";
    exit_code = 0;
  });

  auto* show = cmd->add_subcommand("show", "one resource's record (password hidden)");
  add_state_options(*show, *opts, false);
  show->add_option("address", *targets, "resource address")->required()->expected(1);
  show->callback([opts, targets, &exit_code] {
    auto store = open_state_store(*opts);
    State state = read_state(*store);
    nlohmann::json j = record_to_json(resolve_address(state, targets->front()));
    if (!j["initial_password"].get<std::string>().empty()) j["initial_password"] = "(sensitive)";
    std::cout << j.dump(2) << "\n";
    exit_code = 0;
  });

  auto* rm = cmd->add_subcommand("rm", "forget resources (they keep running; dbform stops managing them)");
  add_state_options(*rm, *opts, true);
  rm->add_option("address", *targets, "resource addresses")->required();
  rm->callback([opts, targets, &exit_code] {
    auto store = open_state_store(*opts);
    auto lock = store->lock("state rm", lock_timeout(*opts));
    State state = read_state(*store);
    std::vector<std::string> addresses;
    for (const auto& t : *targets) addresses.push_back(resolve_address(state, t).address);  // all or nothing
    for (const auto& a : addresses) state.remove(a);
    store->write(state);
    for (const auto& a : addresses)
      std::cout << "Removed " << a << " from the state. It still exists in the API; dbform no longer manages it.\n";
    exit_code = 0;
  });
}

}  // namespace dbform::cli
