package io.rdma4j.nvmeof;

import java.util.List;

/**
 * An asynchronous event the controller reported by completing an Asynchronous Event Request, with the log page the host
 * read to clear it (the controller reports no further event of that type until the page is read).
 *
 * @param type asynchronous event type: 0 error status, 1 SMART / health status, 2 notice, 6 I/O command set specific, 7
 *     vendor specific
 * @param info asynchronous event information (its meaning depends on the type; for a notice, 0 = Namespace Attribute
 *     Changed)
 * @param logPage the log page identifier the controller named (04h Changed Namespace List for namespace changes)
 * @param changedNamespaces for log 04h, the namespace IDs whose attributes changed, ascending; empty otherwise
 * @param moreThanListed for log 04h, the controller changed more than the 1,024 namespaces the page can list (it then
 *     lists none): rescan every namespace
 */
public record AsyncEvent(int type, int info, int logPage, List<Long> changedNamespaces, boolean moreThanListed) {
    public static final int TYPE_ERROR = 0, TYPE_SMART = 1, TYPE_NOTICE = 2, TYPE_IO_COMMAND_SET = 6, TYPE_VENDOR = 7;
    public static final int NOTICE_NAMESPACE_ATTRIBUTE_CHANGED = 0x00;
    public static final int LOG_CHANGED_NAMESPACE_LIST = 0x04;

    public AsyncEvent {
        changedNamespaces = List.copyOf(changedNamespaces);
    }

    /** @return whether {@code type} is one the specification defines (0, 1, 2, 6 or 7; 3 to 5 are reserved) */
    public static boolean definedType(int type) {
        return type == TYPE_ERROR
                || type == TYPE_SMART
                || type == TYPE_NOTICE
                || type == TYPE_IO_COMMAND_SET
                || type == TYPE_VENDOR;
    }

    /** @return whether this is a Notice: Namespace Attribute Changed */
    public boolean namespaceAttributeChanged() {
        return type == TYPE_NOTICE && info == NOTICE_NAMESPACE_ATTRIBUTE_CHANGED;
    }

    /** @return the specification's name of the type */
    public String typeName() {
        return switch (type) {
            case TYPE_ERROR -> "Error";
            case TYPE_SMART -> "SMART / Health Status";
            case TYPE_NOTICE -> "Notice";
            case TYPE_IO_COMMAND_SET -> "I/O Command Set Specific";
            case TYPE_VENDOR -> "Vendor Specific";
            default -> "reserved type " + type;
        };
    }

    /** @return the specification's name of the information field for this type, or its value */
    public String infoName() {
        String n = switch (type) {
            case TYPE_ERROR ->
                switch (info) {
                    case 0 -> "Write to Invalid Doorbell Register";
                    case 1 -> "Invalid Doorbell Write Value";
                    case 2 -> "Diagnostic Failure";
                    case 3 -> "Persistent Internal Error";
                    case 4 -> "Transient Internal Error";
                    case 5 -> "Firmware Image Load Error";
                    default -> null;
                };
            case TYPE_SMART ->
                switch (info) {
                    case 0 -> "NVM Subsystem Reliability";
                    case 1 -> "Temperature Threshold";
                    case 2 -> "Spare Below Threshold";
                    default -> null;
                };
            case TYPE_NOTICE ->
                switch (info) {
                    case 0 -> "Namespace Attribute Changed";
                    case 1 -> "Firmware Activation Starting";
                    case 2 -> "Telemetry Log Changed";
                    case 3 -> "Asymmetric Namespace Access Change";
                    case 4 -> "Predictable Latency Event Aggregate Log Change";
                    case 5 -> "LBA Status Information Alert";
                    case 6 -> "Endurance Group Event Aggregate Log Page Change";
                    case 0xf0 -> "Discovery Log Page Change";
                    default -> null;
                };
            case TYPE_IO_COMMAND_SET ->
                switch (info) {
                    case 0 -> "Reservation Log Page Available";
                    case 1 -> "Sanitize Operation Completed";
                    case 2 -> "Sanitize Operation Completed With Unexpected Deallocation";
                    default -> null;
                };
            default -> null;
        };
        return n != null ? n : String.format("information 0x%02x", info);
    }

    @Override
    public String toString() {
        return "AsyncEvent[" + typeName() + ": " + infoName() + String.format(", log page 0x%02x", logPage)
                + (logPage == LOG_CHANGED_NAMESPACE_LIST
                        ? ", changed namespaces " + (moreThanListed ? "(more than 1024)" : changedNamespaces)
                        : "")
                + "]";
    }
}
