/// The version of arrival, defined once: `arrival --version` prints it.
public enum ArrivalVersion {
    public static let current = "0.9.0"
}
