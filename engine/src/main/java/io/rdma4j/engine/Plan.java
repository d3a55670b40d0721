package io.rdma4j.engine;

import java.util.List;

/**
 * How a transfer would be carried, without moving a byte: the lanes, their levels, bytes and chunks, and why.
 *
 * @param lanes lanes used, in striping order
 * @param bytes total bytes
 * @param reason why these lanes
 */
public record Plan(List<PlanLane> lanes, long bytes, String reason) {
    /** Copies {@code lanes}. */
    public Plan {
        lanes = List.copyOf(lanes);
    }

    /** {@return the plan as the JSON contract of {@code ./rdma4j explain --json}} */
    public String toJson() {
        StringBuilder sb = new StringBuilder("{\"lanes\": [");
        for (int i = 0; i < lanes.size(); i++) {
            PlanLane l = lanes.get(i);
            if (i > 0) {
                sb.append(", ");
            }
            sb.append("{\"localNic\": ")
                    .append(quote(l.localNic()))
                    .append(", \"remoteNic\": ")
                    .append(quote(l.remoteNic()))
                    .append(", \"localLevel\": ")
                    .append(quote(l.localLevel()))
                    .append(", \"remoteLevel\": ")
                    .append(quote(l.remoteLevel()))
                    .append(", \"bytes\": ")
                    .append(l.bytes())
                    .append(", \"chunks\": ")
                    .append(l.chunks())
                    .append('}');
        }
        return sb.append("], \"reason\": ").append(quote(reason)).append('}').toString();
    }

    /** {@return a human-readable table} */
    public String toText() {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(
                "%-14s %-14s %-6s %-6s %14s %8s%n", "local NIC", "remote NIC", "local", "remote", "bytes", "chunks"));
        for (PlanLane l : lanes) {
            sb.append(String.format(
                    "%-14s %-14s %-6s %-6s %14d %8d%n",
                    l.localNic(), l.remoteNic(), l.localLevel(), l.remoteLevel(), l.bytes(), l.chunks()));
        }
        return sb.append("why: ").append(reason).append('\n').toString();
    }

    /**
     * JSON string literal of {@code s} ({@code null} for null).
     *
     * @param s the string, or {@code null}
     * @return the literal, quotes included, or {@code null}
     */
    public static String quote(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder sb = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }
}
