package io.rdma4j.cli;

import io.rdma4j.engine.Explain;
import io.rdma4j.engine.Plan;
import io.rdma4j.topology.Topology;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Locale;

/**
 * {@code ./rdma4j explain}: the engine's plan for a transfer between two machines described by topology files, without
 * moving a byte: which local NIC pairs with which remote NIC, their levels, bytes and chunks per lane, and why.
 */
final class ExplainCommand implements Command {
    private static final String USAGE = """
            usage: ./rdma4j explain --src-topology FILE --src LOC --dst-topology FILE --dst LOC --bytes N
                                    [--chunk N] [--json]
              --src-topology FILE  the sending machine: an NCCL topology XML file or a captured sysfs root directory
              --src LOC            where the data lives there: a GPU's PCI address (0000:10:1c.0) or numa:N
              --dst-topology FILE  the receiving machine, same forms
              --dst LOC            where the data lands there
              --bytes N            transfer size (suffixes K, M, G, KiB, MiB, GiB)
              --chunk N            chunk size (default 1MiB); transfers below 128KiB use one lane
              --json               {"lanes": [{"localNic", "remoteNic", "localLevel", "remoteLevel", "bytes",
                                   "chunks"}], "reason"}
            Exit status: 0 with a plan, 1 when a side has no RDMA NIC (the reason says so), 2 on bad usage.""";

    private final PrintStream out;

    ExplainCommand() {
        this(System.out);
    }

    ExplainCommand(PrintStream out) {
        this.out = out;
    }

    @Override
    public String name() {
        return "explain";
    }

    @Override
    public String summary() {
        return "the engine's lane plan between two topology files, without moving a byte (--json)";
    }

    @Override
    public int run(String[] args) {
        String srcTopo = null;
        String src = null;
        String dstTopo = null;
        String dst = null;
        long bytes = -1;
        long chunk = 1 << 20;
        boolean json = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--json" -> json = true;
                case "-h", "--help" -> {
                    out.println(USAGE);
                    return 0;
                }
                case "--src-topology", "--src", "--dst-topology", "--dst", "--bytes", "--chunk" -> {
                    if (i + 1 >= args.length) {
                        System.err.println("rdma4j explain: " + a + " needs a value\n" + USAGE);
                        return 2;
                    }
                    String v = args[++i];
                    switch (a) {
                        case "--src-topology" -> srcTopo = v;
                        case "--src" -> src = v;
                        case "--dst-topology" -> dstTopo = v;
                        case "--dst" -> dst = v;
                        case "--bytes" -> bytes = parseSize(v, "--bytes");
                        default -> chunk = parseSize(v, "--chunk");
                    }
                }
                default -> {
                    System.err.println("rdma4j explain: unknown option '" + a + "'\n" + USAGE);
                    return 2;
                }
            }
        }
        if (srcTopo == null || src == null || dstTopo == null || dst == null || bytes < 0) {
            System.err.println(
                    "rdma4j explain: --src-topology, --src, --dst-topology, --dst and --bytes are required\n" + USAGE);
            return 2;
        }
        if (chunk < 4096) {
            System.err.println("rdma4j explain: --chunk must be at least 4096 bytes");
            return 2;
        }
        Topology s = Explain.topology(Path.of(srcTopo));
        Topology d = Explain.topology(Path.of(dstTopo));
        Plan plan = Explain.plan(s, src, d, dst, bytes, chunk, 128 << 10);
        if (json) {
            out.println(plan.toJson());
        } else {
            out.println(
                    "write of " + bytes + " bytes from " + src + " (" + srcTopo + ") to " + dst + " (" + dstTopo + ")");
            out.print(plan.toText());
        }
        return plan.lanes().isEmpty() ? 1 : 0;
    }

    /** Parses {@code 1048576}, {@code 1M}, {@code 1MiB}, {@code 4G}... (binary multiples). */
    static long parseSize(String text, String what) {
        String t = text.trim().toUpperCase(Locale.ROOT);
        long mult = 1;
        String num = t;
        String[][] units = {
            {"KIB", "1024"},
            {"MIB", "1048576"},
            {"GIB", "1073741824"},
            {"TIB", "1099511627776"},
            {"K", "1024"},
            {"M", "1048576"},
            {"G", "1073741824"},
            {"T", "1099511627776"},
            {"B", "1"}
        };
        for (String[] u : units) {
            if (t.endsWith(u[0])) {
                mult = Long.parseLong(u[1]);
                num = t.substring(0, t.length() - u[0].length()).trim();
                break;
            }
        }
        try {
            long v = Long.parseLong(num);
            if (v < 0) {
                throw new NumberFormatException();
            }
            return Math.multiplyExact(v, mult);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException(
                    what + " '" + text + "' is not a size: use a byte count such as 1048576, 1MiB or 4G");
        }
    }
}
