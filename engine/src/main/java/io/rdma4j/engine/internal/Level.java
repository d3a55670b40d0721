package io.rdma4j.engine.internal;

import java.util.Locale;

/** Distance of a NIC from memory, best first, as NCCL and the topology module name them. */
public enum Level {
    PIX,
    PXB,
    PHB,
    NODE,
    SYS;

    /** Parses a level name (case-insensitive); NCCL's {@code NV*} and {@code LOC} count as {@code PIX}. */
    public static Level parse(String s) {
        String u = s.toUpperCase(Locale.ROOT);
        return switch (u) {
            case "LOC", "NVL", "NVB", "C2C", "PIX" -> PIX;
            case "PXB", "PXN" -> PXB;
            case "PHB", "P2C" -> PHB;
            case "NODE" -> NODE;
            case "SYS", "NET" -> SYS;
            default ->
                throw new IllegalArgumentException(
                        "unknown topology level '" + s + "': expected PIX, PXB, PHB, NODE or SYS");
        };
    }

    /** @return the worse of two levels */
    public static Level worse(Level a, Level b) {
        return a.ordinal() >= b.ordinal() ? a : b;
    }
}
