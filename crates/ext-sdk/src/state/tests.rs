use super::*;

const REQUESTS: &[Method] = &[
    Method::Initialize,
    Method::Shutdown,
    Method::Intercept,
    Method::UiAction,
    Method::UiSubmit,
];

fn served(state: State) -> Vec<Method> {
    REQUESTS
        .iter()
        .copied()
        .filter(|m| state.serves(*m))
        .collect()
}

#[test]
fn the_request_table_of_section_6_5() {
    assert_eq!(served(State::New), [Method::Initialize, Method::Shutdown]);
    assert_eq!(served(State::Initializing), [Method::Shutdown]);
    assert_eq!(served(State::Handshake), [Method::Shutdown]);
    assert_eq!(
        served(State::Ready),
        [
            Method::Shutdown,
            Method::Intercept,
            Method::UiAction,
            Method::UiSubmit
        ]
    );
    assert!(served(State::Shutdown).is_empty());
}

#[test]
fn the_notification_table_of_section_6_5() {
    let notes = [Method::Initialized, Method::Event, Method::ResourcesChanged];
    let handled = |state: State| -> Vec<Method> {
        notes
            .iter()
            .copied()
            .filter(|m| state.handles(*m))
            .collect()
    };
    assert!(handled(State::New).is_empty());
    assert!(handled(State::Initializing).is_empty());
    assert_eq!(handled(State::Handshake), [Method::Initialized]);
    assert_eq!(
        handled(State::Ready),
        [Method::Event, Method::ResourcesChanged]
    );
    assert!(handled(State::Shutdown).is_empty());
}

#[test]
fn transitions_are_compare_and_swap() {
    let cell = StateCell::new();
    assert_eq!(cell.get(), State::New);
    assert!(!cell.advance(State::Handshake, State::Ready));
    assert!(cell.advance(State::New, State::Initializing));
    assert!(cell.advance(State::Initializing, State::Handshake));
    assert!(!cell.may_call_host());
    assert!(cell.advance(State::Handshake, State::Ready));
    assert!(cell.may_call_host());
    assert_eq!(cell.shut_down(), State::Ready);
    // A shutdown after readiness keeps host calls possible until the host closes stdin.
    assert!(cell.may_call_host());
    assert_eq!(cell.get().name(), "shutdown");
}

#[test]
fn a_shutdown_before_readiness_never_allows_host_calls() {
    let cell = StateCell::new();
    assert_eq!(cell.shut_down(), State::New);
    assert!(!cell.may_call_host());
    assert!(!cell.advance(State::Handshake, State::Ready));
}
