package io.rdma4j.cuda;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * PCI addresses in the form sysfs and the topology code use, {@code dddd:bb:dd.f} in lower case. The driver
 * ({@code cuDeviceGetPCIBusId}) prints {@code 0000:3B:00.0}; {@code nvidia-smi} prints {@code 00000000:3B:00.0}.
 */
public final class PciAddress {
    private static final Pattern BDF =
            Pattern.compile("\\s*(?:([0-9a-fA-F]{1,8}):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\\.([0-7])\\s*");

    private PciAddress() {}

    /**
     * @param address a PCI address with or without its domain ({@code 3B:00.0} means domain 0), any case
     * @return the same address as {@code dddd:bb:dd.f}, lower case
     * @throws IllegalArgumentException if it is not a PCI address
     */
    public static String normalize(String address) {
        if (address == null) {
            throw new IllegalArgumentException("PCI address is null");
        }
        Matcher m = BDF.matcher(address);
        if (!m.matches()) {
            throw new IllegalArgumentException(
                    "not a PCI address: '" + address + "' (expected domain:bus:device.function, e.g. 0000:3b:00.0)");
        }
        long domain = m.group(1) == null ? 0 : Long.parseLong(m.group(1), 16);
        int bus = Integer.parseInt(m.group(2), 16);
        int device = Integer.parseInt(m.group(3), 16);
        if (device > 0x1f) {
            throw new IllegalArgumentException(
                    "not a PCI address: '" + address + "' (device number " + device + " is above 31)");
        }
        return String.format(Locale.ROOT, "%04x:%02x:%02x.%s", domain, bus, device, m.group(4));
    }
}
