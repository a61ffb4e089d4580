#pragma once
// Losing an answer the way real networks do: the request was read and performed, then the
// connection closes before a single byte of the answer leaves. cpp-httplib gives handlers no
// access to their socket, so it is found by its two ports among this process's descriptors.

namespace dbform::sim {

// Shuts down (both ways) the accepted connection of this process whose local port is
// `local_port` and whose peer's port is `remote_port`; false when there is none. The server's
// write of the answer then fails and it closes the connection: the client sees it end with no
// answer at all, the case in which libcurl replays a request sent on a reused connection.
bool cut_connection_silently(int local_port, int remote_port);

}  // namespace dbform::sim
