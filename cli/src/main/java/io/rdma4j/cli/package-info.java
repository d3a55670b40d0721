/**
 * The {@code ./rdma4j} command line: one {@link io.rdma4j.cli.Command} per subcommand, dispatched by
 * {@link io.rdma4j.cli.Main}.
 */
package io.rdma4j.cli;
