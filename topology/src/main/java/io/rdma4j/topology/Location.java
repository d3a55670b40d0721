package io.rdma4j.topology;

/** Where data lives, for ranking: a GPU or accelerator (by PCI address) or a NUMA node (host memory). */
public sealed interface Location {
    /** Memory of a PCI device. */
    record Device(PciAddress address) implements Location {
        @Override
        public String toString() {
            return address.toString();
        }
    }

    /** Host memory on a NUMA node. */
    record Numa(int node) implements Location {
        public Numa {
            if (node < 0) {
                throw new IllegalArgumentException("NUMA node must be >= 0, got " + node);
            }
        }

        @Override
        public String toString() {
            return "numa:" + node;
        }
    }

    static Location device(PciAddress address) {
        return new Device(address);
    }

    static Location numa(int node) {
        return new Numa(node);
    }

    /**
     * Parses {@code numa:N} or a PCI address ({@code 0000:1b:00.0}, {@code 1b:00.0}).
     *
     * @throws IllegalArgumentException naming the text and the accepted forms
     */
    static Location parse(String text) {
        String t = text.trim();
        if (t.startsWith("numa:")) {
            try {
                return new Numa(Integer.parseInt(t.substring(5)));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        "bad location '" + text + "': expected numa:N with N a node number", e);
            }
        }
        PciAddress a = PciAddress.tryParse(t);
        if (a == null) {
            throw new IllegalArgumentException(
                    "bad location '" + text + "': expected numa:N or a PCI address such as 0000:1b:00.0");
        }
        return new Device(a);
    }
}
