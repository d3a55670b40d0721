package io.rdma4j.topology.internal;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * Parses the CPU set notations of sysfs ({@code 0-3,8}), of sysfs masks and NCCL ({@code 000000ff,ffff0000}) and of
 * hwloc ({@code 0x00ff,0xffffffff}).
 */
public final class CpuSets {
    private CpuSets() {}

    /** @return the CPUs of a list such as {@code 0-3,8-11,16}; empty for blank input; unparseable parts are skipped */
    public static BitSet parseList(String text) {
        BitSet set = new BitSet();
        if (text == null) {
            return set;
        }
        for (String part : text.trim().split(",")) {
            String p = part.trim();
            if (p.isEmpty()) {
                continue;
            }
            try {
                int dash = p.indexOf('-');
                if (dash < 0) {
                    set.set(Integer.parseInt(p));
                } else {
                    int lo = Integer.parseInt(p.substring(0, dash).trim());
                    int hi = Integer.parseInt(p.substring(dash + 1).trim());
                    if (lo >= 0 && hi >= lo && hi < 1 << 20) {
                        set.set(lo, hi + 1);
                    }
                }
            } catch (NumberFormatException e) {
                // a malformed range says nothing we can use; the rest of the list still counts
            }
        }
        return set;
    }

    /**
     * @return the CPUs of a hex mask, most significant word first, words separated by commas, each optionally prefixed
     *     by {@code 0x} (hwloc); empty for blank or malformed input
     */
    public static BitSet parseMask(String text) {
        BitSet set = new BitSet();
        if (text == null || text.isBlank()) {
            return set;
        }
        String[] words = text.trim().split(",");
        int bit = 0;
        for (int i = words.length - 1; i >= 0; i--) {
            String w = words[i].trim();
            if (w.startsWith("0x") || w.startsWith("0X")) {
                w = w.substring(2);
            }
            if (w.isEmpty()) {
                bit += 32;
                continue;
            }
            int width = words.length == 1 ? w.length() * 4 : Math.max(32, w.length() * 4);
            for (int c = w.length() - 1, b = 0; c >= 0; c--, b += 4) {
                int nibble = Character.digit(w.charAt(c), 16);
                if (nibble < 0) {
                    return new BitSet();
                }
                for (int k = 0; k < 4; k++) {
                    if ((nibble & (1 << k)) != 0) {
                        set.set(bit + b + k);
                    }
                }
            }
            bit += width;
        }
        return set;
    }

    /** @return the set bits in ascending order */
    public static List<Integer> toList(BitSet set) {
        List<Integer> out = new ArrayList<>(set.cardinality());
        set.stream().forEach(out::add);
        return out;
    }

    /** @return a compact list form such as {@code 0-3,8} */
    public static String format(List<Integer> cpus) {
        StringBuilder sb = new StringBuilder();
        int i = 0;
        while (i < cpus.size()) {
            int j = i;
            while (j + 1 < cpus.size() && cpus.get(j + 1) == cpus.get(j) + 1) {
                j++;
            }
            if (!sb.isEmpty()) {
                sb.append(',');
            }
            sb.append(cpus.get(i));
            if (j > i) {
                sb.append('-').append(cpus.get(j));
            }
            i = j + 1;
        }
        return sb.toString();
    }
}
