package io.rdma4j.cuda;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Reads {@code CUDA_VISIBLE_DEVICES} the way the CUDA driver does, to explain what the driver shows; the driver applies
 * it itself in {@code cuInit}, so rdma4j never filters devices. Unset: every GPU. Otherwise a comma-separated list of
 * ordinals ({@code 0,2}) or UUIDs ({@code GPU-8e6a...}, {@code MIG-...}, prefixes allowed); the visible devices are
 * renumbered 0, 1, ... in the listed order. The first entry that is not valid ends the list (it and everything after it
 * are ignored), so an empty value or {@code -1} hides every GPU.
 */
public final class CudaVisibleDevices {
    /** The environment variable's name. */
    public static final String VARIABLE = "CUDA_VISIBLE_DEVICES";

    private static final Pattern ORDINAL = Pattern.compile("[0-9]+");
    private static final Pattern UUID = Pattern.compile("(GPU|MIG)-[0-9a-fA-F][0-9a-fA-F/-]*");

    private CudaVisibleDevices() {}

    /**
     * @param value the variable's value, or null when unset
     * @return the entries the driver uses, in order; null means every GPU is visible
     */
    public static List<String> parse(String value) {
        if (value == null) {
            return null;
        }
        List<String> out = new ArrayList<>();
        for (String raw : value.split(",", -1)) {
            String entry = raw.strip();
            if (ORDINAL.matcher(entry).matches() || UUID.matcher(entry).matches()) {
                out.add(entry);
            } else {
                break;
            }
        }
        return List.copyOf(out);
    }

    /** One sentence on what the value makes visible, for error messages. */
    public static String describe(String value) {
        List<String> entries = parse(value);
        if (entries == null) {
            return VARIABLE + " is unset (every GPU is visible)";
        }
        if (entries.isEmpty()) {
            return VARIABLE + "='" + value + "' hides every GPU: unset it or list the GPUs to use";
        }
        return VARIABLE + "='" + value + "' makes visible, as ordinals 0.." + (entries.size() - 1) + ": "
                + String.join(", ", entries);
    }
}
