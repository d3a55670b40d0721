package io.rdma4j.topology;

import java.util.ArrayList;
import java.util.List;

/**
 * Which NICs may be used, in the syntax of NCCL's {@code NCCL_IB_HCA}: a comma-separated list of names, each a prefix
 * ({@code mlx5} matches {@code mlx5_0} and {@code mlx5_10}) or, after {@code =}, an exact name; a leading {@code ^}
 * turns the list into an exclude list; {@code name:port} restricts an entry to one port. Examples:
 * {@code mlx5_0,mlx5_3}, {@code ^mlx5_1}, {@code =mlx5_1}, {@code ^=mlx5_1:2}. As in NCCL, entries match verbs device
 * names ({@code mlx5_0}); a NIC without a verbs device is matched by its fabric names ({@code cxi0}) or, failing those,
 * its network interfaces.
 */
public final class NicFilter {
    /**
     * The environment variable read by {@link Topology#scan()} and, unless told otherwise, by {@link Topology.Builder}.
     */
    public static final String ENV = "RDMA4J_IB_HCA";

    /** Lets every NIC through. */
    public static final NicFilter ALL = new NicFilter("", false, false, List.of());

    private record Entry(String name, int port) {}

    private final String spec;
    private final boolean exclude;
    private final boolean exact;
    private final List<Entry> entries;

    private NicFilter(String spec, boolean exclude, boolean exact, List<Entry> entries) {
        this.spec = spec;
        this.exclude = exclude;
        this.exact = exact;
        this.entries = entries;
    }

    /**
     * @param spec the filter; null or blank lets everything through
     * @throws IllegalArgumentException naming the bad entry when a port is not a positive number
     */
    public static NicFilter parse(String spec) {
        if (spec == null || spec.isBlank()) {
            return ALL;
        }
        String s = spec.trim();
        boolean exclude = s.startsWith("^");
        if (exclude) {
            s = s.substring(1);
        }
        boolean exact = s.startsWith("=");
        if (exact) {
            s = s.substring(1);
        }
        List<Entry> entries = new ArrayList<>();
        for (String part : s.split(",")) {
            String p = part.trim();
            if (p.isEmpty()) {
                continue;
            }
            int colon = p.indexOf(':');
            int port = -1;
            String name = p;
            if (colon >= 0) {
                name = p.substring(0, colon);
                try {
                    port = Integer.parseInt(p.substring(colon + 1));
                } catch (NumberFormatException e) {
                    port = 0;
                }
                if (port <= 0) {
                    throw new IllegalArgumentException("bad NIC filter entry '" + p + "' in '" + spec
                            + "': the part after ':' must be a port number >= 1, e.g. mlx5_0:1");
                }
            }
            entries.add(new Entry(name, port));
        }
        return new NicFilter(spec.trim(), exclude, exact, List.copyOf(entries));
    }

    /** @return the filter as given, empty for {@link #ALL} */
    public String spec() {
        return spec;
    }

    /** @return true when this filter lets everything through */
    public boolean isAll() {
        return entries.isEmpty() && !exclude;
    }

    private boolean nameMatches(String pattern, String name) {
        return exact ? name.equals(pattern) : name.startsWith(pattern);
    }

    /**
     * @param name a device name
     * @param port a port number, or -1 for "the device as a whole"
     * @return whether that device (port) may be used
     */
    public boolean allows(String name, int port) {
        if (entries.isEmpty()) {
            return true;
        }
        boolean hit = false;
        for (Entry e : entries) {
            if (nameMatches(e.name, name)) {
                if (e.port < 0 || port < 0 || e.port == port) {
                    // an exclude entry for one port does not exclude the device as a whole
                    if (exclude && e.port > 0 && port < 0) {
                        continue;
                    }
                    hit = true;
                    break;
                }
            }
        }
        return exclude != hit;
    }

    /**
     * @return whether the NIC may be used: for an include list, some name of it is listed; for an exclude list, none of
     *     its names is
     */
    public boolean allows(PciDevice nic) {
        List<String> names = nic.names();
        if (entries.isEmpty()) {
            return true;
        }
        if (exclude) {
            return names.stream().allMatch(n -> allows(n, -1));
        }
        return names.stream().anyMatch(n -> allows(n, -1));
    }

    @Override
    public String toString() {
        return isAll() ? "all NICs" : spec;
    }
}
