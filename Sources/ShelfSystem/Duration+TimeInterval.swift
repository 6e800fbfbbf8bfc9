extension Duration {
    /// The duration in (fractional) seconds, as `Date`, Dispatch and libfuse's timeouts want it.
    public var timeInterval: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
