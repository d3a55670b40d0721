package io.rdma4j.topology;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A PCI function address, {@code domain:bus:device.function}. Domains can be wider than 4 hex digits (Intel VMD and
 * Hyper-V use {@code 10000} and up); {@link #toString()} always prints at least 4 lower-case domain digits.
 *
 * @param domain PCI segment, 0 to 0x7fffffff
 * @param bus 0 to 0xff
 * @param device 0 to 0x1f
 * @param function 0 to 7
 */
public record PciAddress(int domain, int bus, int device, int function) implements Comparable<PciAddress> {
    private static final Pattern BDF =
            Pattern.compile("(?:([0-9a-fA-F]{1,8}):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\\.([0-7])");

    public PciAddress {
        if (domain < 0 || bus < 0 || bus > 0xff || device < 0 || device > 0x1f || function < 0 || function > 7) {
            throw new IllegalArgumentException("not a PCI address: domain=" + domain + " bus=" + bus + " device="
                    + device + " function=" + function + " (bus 0-ff, device 0-1f, function 0-7)");
        }
    }

    /**
     * Parses {@code dddd:bb:dd.f} or {@code bb:dd.f} (domain 0), any case, domain of 1 to 8 hex digits.
     *
     * @throws IllegalArgumentException naming the text when it is not a PCI address
     */
    public static PciAddress parse(String text) {
        PciAddress a = tryParse(text);
        if (a == null) {
            throw new IllegalArgumentException(
                    "not a PCI address: '" + text + "' (expected dddd:bb:dd.f, e.g. 0000:1a:00.0)");
        }
        return a;
    }

    /** Like {@link #parse} but returns null for anything that is not a PCI address. */
    public static PciAddress tryParse(String text) {
        if (text == null) {
            return null;
        }
        Matcher m = BDF.matcher(text.trim());
        if (!m.matches()) {
            return null;
        }
        long domain = m.group(1) == null ? 0 : Long.parseLong(m.group(1), 16);
        int dev = Integer.parseInt(m.group(3), 16);
        if (domain > Integer.MAX_VALUE || dev > 0x1f) {
            return null;
        }
        return new PciAddress((int) domain, Integer.parseInt(m.group(2), 16), dev, Integer.parseInt(m.group(4)));
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "%04x:%02x:%02x.%x", domain, bus, device, function);
    }

    @Override
    public int compareTo(PciAddress o) {
        int c = Integer.compare(domain, o.domain);
        if (c == 0) {
            c = Integer.compare(bus, o.bus);
        }
        if (c == 0) {
            c = Integer.compare(device, o.device);
        }
        return c != 0 ? c : Integer.compare(function, o.function);
    }
}
