package io.rdma4j.topology.internal;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses link speeds and RDMA port rates as sysfs and vendor files print them. */
public final class LinkSpeeds {
    private static final Pattern LEADING_NUMBER = Pattern.compile("^\\s*([0-9]+(?:\\.[0-9]+)?)");

    private LinkSpeeds() {}

    /** @return GT/s from {@code 8 GT/s}, {@code 32.0 GT/s PCIe}, {@code 2.5 GT/s}; 0 for {@code Unknown} or blank */
    public static double gigaTransfers(String text) {
        return leadingNumber(text);
    }

    /** @return Gbit/s from an RDMA port rate such as {@code 100 Gb/sec (4X EDR)}; 0 when unknown */
    public static double portRateGbps(String text) {
        return leadingNumber(text);
    }

    /** @return the link width from {@code 16} or {@code x16}; 0 when unknown */
    public static int width(String text) {
        if (text == null) {
            return 0;
        }
        String t = text.trim();
        if (t.startsWith("x") || t.startsWith("X")) {
            t = t.substring(1);
        }
        double v = leadingNumber(t);
        return v > 0 && v <= 64 ? (int) v : 0;
    }

    static double leadingNumber(String text) {
        if (text == null) {
            return 0;
        }
        Matcher m = LEADING_NUMBER.matcher(text);
        if (!m.find()) {
            return 0;
        }
        try {
            return Double.parseDouble(m.group(1));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** @return a hex number with or without {@code 0x}, or -1 when blank or malformed */
    public static int hex(String text) {
        if (text == null) {
            return -1;
        }
        String t = text.trim();
        if (t.startsWith("0x") || t.startsWith("0X")) {
            t = t.substring(2);
        }
        if (t.isEmpty() || t.length() > 8) {
            return -1;
        }
        try {
            long v = Long.parseLong(t, 16);
            return v > Integer.MAX_VALUE ? -1 : (int) v;
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
