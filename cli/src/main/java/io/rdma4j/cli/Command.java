package io.rdma4j.cli;

/** One {@code ./rdma4j} subcommand. */
interface Command {
    /** @return the word after {@code ./rdma4j} */
    String name();

    /** @return one line for {@code ./rdma4j help} */
    String summary();

    /** Runs the command; the return value is the process exit status. */
    int run(String[] args) throws Exception;
}
