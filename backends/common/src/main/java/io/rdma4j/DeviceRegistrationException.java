package io.rdma4j;

/**
 * Device (GPU) memory could not be registered with a NIC on any path this backend has. The message names each path
 * tried, with the native error of each, and what makes registration work (a kernel module, a driver or library
 * version). The engine then stages such memory through host memory.
 */
public class DeviceRegistrationException extends Rdma4jException {
    public DeviceRegistrationException(String message) {
        super(message);
    }

    public DeviceRegistrationException(String message, Throwable cause) {
        super(message, cause);
    }
}
