package metrics

// MethodologyVersion changes whenever a formula or a treatment does.
const MethodologyVersion = "2"

// Methodology says how every figure of a metrics response was computed; it
// is attached to each response, so a reader never has to guess.
type Methodology struct {
	Version        string      `json:"version" doc:"Version of this methodology; it changes whenever a formula or a treatment does."`
	Formulas       Formulas    `json:"formulas" doc:"How each figure is computed."`
	Known          []string    `json:"known" doc:"States that count as known time."`
	Down           string      `json:"down" doc:"When DOWN time begins and ends: how outages and recoveries are dated, and how a failure too short to confirm counts."`
	Pending        string      `json:"pending" doc:"How PENDING time counts."`
	Unknown        string      `json:"unknown" doc:"How UNKNOWN time counts."`
	Paused         string      `json:"paused" doc:"How PAUSED time counts."`
	Maintenance    string      `json:"maintenance" doc:"How MAINTENANCE time counts."`
	BeforeCreation string      `json:"beforeCreation" doc:"How the part of a window before the subject existed counts."`
	Percentiles    Percentiles `json:"percentiles" doc:"How latency percentiles are estimated."`
	Sources        Sources     `json:"sources" doc:"Where the figures come from."`
	NullRatios     string      `json:"nullRatios" doc:"When a ratio is null."`
}

// Formulas of the figures, in words a reader can check.
type Formulas struct {
	Availability           string `json:"availability" doc:"Share of known time that was UP or DEGRADED."`
	UnadjustedAvailability string `json:"unadjustedAvailability" doc:"Share of the time the subject existed that was UP or DEGRADED, nothing excluded."`
	Coverage               string `json:"coverage" doc:"Share of the monitored time whose state was known."`
	BurnRate               string `json:"burnRate" doc:"How fast a span spends the error budget."`
	Budget                 string `json:"budget" doc:"The error budget of an objective and what is left of it."`
}

// Percentiles names the estimator of latency percentiles.
type Percentiles struct {
	Method           string  `json:"method" doc:"The estimator."`
	RelativeAccuracy float64 `json:"relativeAccuracy" doc:"A percentile is within this fraction of a value of the exact rank."`
	Over             string  `json:"over" doc:"Which observations are included."`
}

// Sources says which data each figure integrates.
type Sources struct {
	StateHistory string `json:"stateHistory" doc:"Where durations by state come from."`
	Observations string `json:"observations" doc:"Where check counts and latencies come from."`
}

// Method describes this package's computations.
func Method() Methodology {
	return Methodology{
		Version: MethodologyVersion,
		Formulas: Formulas{
			Availability:           "(UP + DEGRADED) / (UP + DEGRADED + DOWN)",
			UnadjustedAvailability: "(UP + DEGRADED) / (window − beforeCreation)",
			Coverage:               "(UP + DEGRADED + DOWN) / (window − beforeCreation − PAUSED − MAINTENANCE)",
			BurnRate:               "(DOWN / (UP + DEGRADED + DOWN)) / (1 − target), over the span; 1 spends exactly the budget over the period",
			Budget:                 "allowed = (1 − target) × known time of the period; spent = DOWN time of the period; left = 1 − spent / allowed, negative when overspent",
		},
		Known:          []string{"UP", "DEGRADED", "DOWN"},
		Down:           "A monitor's confirmed outage is DOWN from the first failed check of the streak that confirmed it (the alert goes out at confirmation), and its recovery counts from the first passing check of the streak that ended it; neither reaches back before the state it follows began (UNKNOWN, a span no node was checking, the end of maintenance, a resume), after which a streak counts from its first check. Failed checks too few to confirm an outage count as the state they interrupted. A heartbeat is DOWN from its deadline.",
		Pending:        "Not known: excluded from availability, lowers coverage (no result has arrived yet).",
		Unknown:        "Not known: excluded from availability, lowers coverage. A monitor is UNKNOWN after two intervals without a known result (its probe could not tell), and over any span in which no Tocsin node was running its checks (recorded when a node notices, never as UP); a heartbeat from the start of any span in which no node was receiving pings, not from its next deadline; either stays UNKNOWN until a check or a ping says more.",
		Paused:         "Excluded from availability and coverage; lowers unadjustedAvailability.",
		Maintenance:    "Excluded from availability and coverage; lowers unadjustedAvailability.",
		BeforeCreation: "Excluded from every ratio; reported as the beforeCreation duration.",
		Percentiles: Percentiles{
			Method:           "DDSketch",
			RelativeAccuracy: RelativeAccuracy,
			Over:             "known checks",
		},
		Sources: Sources{
			StateHistory: "exact: every transition is stored and integrated",
			Observations: "check counts, latencies, pings and run durations: whole UTC days from daily rollups, whole UTC hours from hourly rollups, the rest (a span's ragged edges, the hour not rolled up yet) from raw rows, so within the raw retention an answer equals the raw computation; a span reaching back beyond the raw rows starts at the next whole UTC hour (beyond the hourly rollups, day), as its from says, and its counts are exact for that span",
		},
		NullRatios: "A ratio is null when its denominator is zero (e.g. no known time in the window); it is never reported as 0 or 1 by default.",
	}
}
