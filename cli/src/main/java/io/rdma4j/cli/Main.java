package io.rdma4j.cli;

import io.rdma4j.Rdma4jException;
import java.util.Arrays;
import java.util.List;

/** Entry point of {@code ./rdma4j}: dispatches to a subcommand. */
public final class Main {
    private Main() {}

    /** Every subcommand, in the order {@code help} lists them. */
    static List<Command> commands() {
        return List.of(
                new InfoCommand(),
                new DemoCommand(),
                new NvmeCommand(),
                new RendezvousCommand(),
                new TopoCommand(),
                new ExplainCommand(),
                new WeightsCommand());
    }

    public static void main(String[] args) {
        System.exit(run(args));
    }

    static int run(String[] args) {
        String name = args.length == 0 ? "help" : args[0];
        if (name.equals("help") || name.equals("--help") || name.equals("-h")) {
            usage();
            return 0;
        }
        for (Command c : commands()) {
            if (c.name().equals(name)) {
                try {
                    return c.run(Arrays.copyOfRange(args, 1, args.length));
                } catch (Rdma4jException
                        | IllegalArgumentException
                        | IllegalStateException
                        | IndexOutOfBoundsException e) {
                    System.err.println("rdma4j " + name + ": " + e.getMessage());
                    return 1;
                } catch (Exception e) {
                    System.err.println("rdma4j " + name + ": " + e);
                    e.printStackTrace();
                    return 1;
                }
            }
        }
        System.err.println("rdma4j: unknown command '" + name + "'");
        usage();
        return 2;
    }

    private static void usage() {
        System.out.println("usage: ./rdma4j <command> [options]\n");
        System.out.printf(
                "  %-12s %s%n",
                "test", "run the host test suite (installs what it needs; the guest suites: scripts/testvm)");
        System.out.printf("  %-12s %s%n", "build", "build everything without running tests");
        System.out.printf("  %-12s %s%n", "install", "put every module, sources, Javadoc and rdma4j-bom in ~/.m2");
        System.out.printf("  %-12s %s%n", "bench", "run the benchmarks in perf/ (./rdma4j bench help)");
        System.out.printf(
                "  %-12s %s%n",
                "soak", "chaos soak: engines in processes under faults; 0 hung, 0 corrupt, no growth (--minutes N)");
        System.out.printf(
                "  %-12s %s%n", "example", "run a program from examples/: OneSidedWrite, WeightSync, NvmeCheckpoint");
        for (Command c : commands()) {
            System.out.printf("  %-12s %s%n", c.name(), c.summary());
        }
    }
}
